import { LoyaltyApiError } from './errors.js';
import type {
  GqlAddress,
  GqlLoyaltyPointsRank,
  GqlLoyaltyPointsRanks,
  GqlPageInfo,
  GqlQuery,
  GqlQueryQuestArgs,
  GqlQuerySpaceArgs,
  GqlQuest,
  GqlSpace,
  GqlSpaceAddressLoyaltyPointsArgs,
  GqlSpaceLoyaltyPointsRanksArgs,
} from './schema-types.generated.js';

/*
 * A client for API consumers that carries the etiquette of docs/api.md (Paging, Client etiquette):
 * cursors until hasNextPage is false, 200-500 ms between pages, boards cached 30-60 s, searches
 * bounded to 100 pages (20 for interactive use), 429 retried after Retry-After, one restart on
 * Invalid cursor, and a stop on a repeated cursor. No NestJS or TypeORM in here.
 */

export type Space = Pick<GqlSpace, 'id' | 'name' | 'description'>;
export type Quest = Pick<GqlQuest, 'name' | 'status' | 'participantsCount'> &
  Partial<Pick<GqlQuest, 'id' | 'type' | 'startTime' | 'endTime' | 'cap'>>;
export type Address = Pick<GqlAddress, 'address' | 'username' | 'avatar'>;
export type Entry = Pick<GqlLoyaltyPointsRank, 'rank' | 'points'> & { address: Address | null };
/** A page as the client asks for it: every field name is checked against schema.gql's types. */
export type Page = Omit<
  Pick<GqlLoyaltyPointsRanks, 'totalCount' | 'pageInfo' | 'list'>,
  'pageInfo' | 'list'
> & {
  pageInfo: Pick<GqlPageInfo, 'hasNextPage' | 'endCursor'>;
  list: Entry[];
};

export interface RetryOptions {
  /** Retries of one request after 429, 503 or a network error. Default 5. */
  maxRetries: number;
  /** First backoff; it doubles each time, with jitter. Default 500 ms. */
  baseDelayMs: number;
  /** No single wait is longer. Default 30 s. */
  maxDelayMs: number;
}

export interface Progress {
  pages: number;
  entries: number;
  totalCount: number;
  /** The cursor to resume after, for exports. */
  cursor: string | null;
  retries: number;
  restarted: boolean;
}

export interface ClientOptions {
  /**
   * The GraphQL endpoint's full URL, path included: `https://loyalty.example.com/query` for this
   * service, or wherever a proxy serves it (`https://api.example.com/graphql`). Used as given.
   */
  endpoint: string;
  token: string;
  /** Wait between two pages, drawn uniformly from [min, max]. Default [200, 500] ms. */
  pageDelayMs?: [number, number];
  /** How long a page, space or quest is reused. Default 45 s; 0 turns the cache off. */
  cacheTtlMs?: number;
  /** Pages a search for one address reads at most. Default 100; 20 with `interactive`. */
  maxSearchPages?: number;
  /** Tighter search bound (20 pages) for user-facing lookups. */
  interactive?: boolean;
  retry?: Partial<RetryOptions>;
  /** One request may take this long before it counts as a network error (and is retried). Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * The consistent export's full URL (`exportBoard`). Default: `export` beside `endpoint`, its
   * query string dropped (`https://api.example.com/v2/graphql` -> `https://api.example.com/v2/export`).
   */
  exportEndpoint?: string;
  /** Another fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Called on every retry, with the error and the wait chosen. */
  onRetry?: (error: LoyaltyApiError, waitMs: number) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface WalkOptions extends CallOptions {
  sprintId?: number | null;
  /** Start after this cursor (resume an export). */
  after?: string | null;
  /** Entries per page (the deprecated `first`; the server caps it at 1000). Default: server's 50. */
  pageSize?: number;
  onProgress?: (progress: Progress) => void;
}

export interface FindRankOptions extends CallOptions {
  sprintId?: number | null;
  maxPages?: number;
  /** Use the server's addressLoyaltyPoints when it has it (default true). */
  useExtension?: boolean;
  onProgress?: (progress: Progress) => void;
}

export interface ExportOptions extends CallOptions {
  sprintId?: number | null;
}

/** One entry of a consistent export, as the server writes it. */
export interface ExportRow {
  rank: number;
  address: string;
  username: string | null;
  points: number;
}

/**
 * A whole board from one database snapshot: iterate it once for its rows, in rank order. The
 * iteration throws (`INCOMPLETE_EXPORT`) rather than end short of `entries`, and `BAD_RESPONSE`
 * on a rank out of order: a completed loop holds the whole snapshot.
 */
export interface BoardExport extends AsyncIterable<ExportRow> {
  /** The moment of the snapshot. */
  readonly asOf: Date;
  /** How many rows the export holds. */
  readonly entries: number;
  /** Closes the connection without reading (or reading the rest of) the rows. */
  cancel(): void;
}

export type FindRankResult =
  | { found: true; entry: Entry; pages: number; via: 'extension' | 'walk' }
  | {
      found: false;
      reason: 'not-on-board' | 'page-limit';
      pages: number;
      via: 'extension' | 'walk';
    };

const ENTRY_FIELDS = 'rank points address { address username avatar }';
const PAGE_QUERY = `query Page($spaceId: Int!, $sprintId: Int, $after: String, $first: Int) {
  space(id: $spaceId) { loyaltyPointsRanks(sprintId: $sprintId, cursorAfter: $after, first: $first) {
    totalCount pageInfo { hasNextPage endCursor } list { ${ENTRY_FIELDS} } } } }`;
const SPACE_QUERY = 'query Space($id: Int!) { space(id: $id) { id name description } }';
const QUEST_QUERY = 'query Quest($id: ID!) { quest(id: $id) { name status participantsCount } }';
const ADDRESS_QUERY = `query AddressRank($spaceId: Int!, $address: String!, $sprintId: Int) {
  space(id: $spaceId) { addressLoyaltyPoints(address: $address, sprintId: $sprintId) { ${ENTRY_FIELDS} } } }`;

/** Every query the client sends, for the spec that validates them against schema.gql. */
export const CLIENT_DOCUMENTS = { PAGE_QUERY, SPACE_QUERY, QUEST_QUERY, ADDRESS_QUERY };

const RETRYABLE = new Set([
  'RATE_LIMIT_EXCEEDED',
  'SERVICE_UNAVAILABLE',
  'REQUEST_TIMEOUT',
  'NETWORK_ERROR',
]);

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new LoyaltyApiError('ABORTED', 'Aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LoyaltyApiError('ABORTED', 'Aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class LoyaltyClient {
  private readonly url: string;
  private readonly exportUrl: string;
  private readonly cache = new Map<string, { until: number; value: unknown }>();
  private readonly retry: RetryOptions;
  private readonly fetchImpl: typeof fetch;
  private extension: boolean | undefined;

  constructor(private readonly options: ClientOptions) {
    this.url = endpointUrl(options.endpoint);
    this.exportUrl =
      options.exportEndpoint === undefined
        ? exportUrlBeside(this.url)
        : endpointUrl(options.exportEndpoint, 'exportEndpoint');
    this.retry = { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
  }

  async space(id: number, options: CallOptions = {}): Promise<Space> {
    const variables: GqlQuerySpaceArgs = { id };
    const data = await this.query<Pick<GqlQuery, 'space'>>(
      SPACE_QUERY,
      { ...variables },
      options,
      true,
    );
    return required(data.space, 'space');
  }

  async quest(id: string, options: CallOptions = {}): Promise<Quest> {
    const variables: GqlQueryQuestArgs = { id };
    const data = await this.query<Pick<GqlQuery, 'quest'>>(
      QUEST_QUERY,
      { ...variables },
      options,
      true,
    );
    return required(data.quest, 'quest');
  }

  /** One page of a board, after `after` (null: the first page). Served from the cache when fresh. */
  page(spaceId: number, options: WalkOptions = {}): Promise<Page> {
    return this.fetchPage(spaceId, options, options.after ?? null, true);
  }

  /**
   * A whole board, page by page with the etiquette's pause between pages; iterate it for entries,
   * or call `.pages()` for pages. Every address is delivered once, in rank order as the server
   * answers. Walks always read fresh pages (the cache is for repeated single reads).
   *
   * `Invalid cursor` mid-walk (the service's secret changed, say) restarts from the first page
   * once, skipping addresses already delivered. A caller's own `after` (a resume) is never
   * restarted: an invalid one is thrown, since starting over would repeat everything already
   * saved. A cursor seen twice, or an empty page that claims a next one, stops the walk.
   */
  leaderboard(
    spaceId: number,
    options: WalkOptions = {},
  ): AsyncIterable<Entry> & { pages(): AsyncIterable<Page> } {
    const pages = () => this.walk(spaceId, options);
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.list;
      },
    };
  }

  /** One address's entry: the server's lookup when it offers one, else a walk of at most maxPages. */
  async findRank(
    spaceId: number,
    address: string,
    options: FindRankOptions = {},
  ): Promise<FindRankResult> {
    if (options.useExtension !== false && this.extension !== false) {
      try {
        const args: Pick<GqlSpaceAddressLoyaltyPointsArgs, 'address' | 'sprintId'> = {
          address,
          sprintId: options.sprintId ?? null,
        };
        const space: GqlQuerySpaceArgs['id'] = spaceId;
        const data = await this.query<{ space: { addressLoyaltyPoints: Entry | null } | null }>(
          ADDRESS_QUERY,
          { spaceId: space, address: args.address, sprintId: args.sprintId },
          options,
          true,
        );
        this.extension = true;
        const entry = required(data.space, 'space').addressLoyaltyPoints;
        return entry
          ? { found: true, entry, pages: 0, via: 'extension' }
          : { found: false, reason: 'not-on-board', pages: 0, via: 'extension' };
      } catch (error) {
        // Strict mode (or an older server): the field does not exist. Walk instead, from now on.
        if (!(error instanceof LoyaltyApiError) || error.code !== 'GRAPHQL_VALIDATION_FAILED')
          throw error;
        this.extension = false;
      }
    }
    const wanted = address.toLowerCase();
    const maxPages = Math.max(
      1,
      options.maxPages ?? this.options.maxSearchPages ?? (this.options.interactive ? 20 : 100),
    );
    let pages = 0;
    for await (const page of this.walk(spaceId, { ...options, after: null })) {
      pages++;
      const entry = page.list.find((e) => e.address?.address.toLowerCase() === wanted);
      if (entry) return { found: true, entry, pages, via: 'walk' };
      if (pages >= maxPages && page.pageInfo.hasNextPage)
        return { found: false, reason: 'page-limit', pages, via: 'walk' };
    }
    return { found: false, reason: 'not-on-board', pages, via: 'walk' };
  }

  /**
   * A whole board from one consistent snapshot, streamed from the server's export endpoint
   * (`GET <exportEndpoint>?spaceId=&sprintId=&format=ndjson`). Resolves once the answer's headers
   * are in, retrying 429, 503 and network errors like every request; the rows then stream without
   * a time limit and are never retried (the snapshot is gone once the connection is). A server
   * without the endpoint is `EXPORT_NOT_OFFERED`: walk the board with `leaderboard()` instead.
   */
  async exportBoard(spaceId: number, options: ExportOptions = {}): Promise<BoardExport> {
    const url = new URL(this.exportUrl);
    url.searchParams.set('spaceId', String(spaceId));
    if (options.sprintId !== undefined && options.sprintId !== null)
      url.searchParams.set('sprintId', String(options.sprintId));
    url.searchParams.set('format', 'ndjson');
    const open = await this.retrying(
      () => this.openExport(url.href, options.signal),
      options.signal,
    );
    let rows: AsyncGenerator<ExportRow> | undefined;
    return {
      asOf: open.asOf,
      entries: open.entries,
      cancel: () => open.close(),
      [Symbol.asyncIterator]: () => {
        if (rows) throw new Error('An export is read once: call exportBoard() again for another');
        rows = exportRows(open);
        return rows;
      },
    };
  }

  private async openExport(href: string, signal?: AbortSignal): Promise<OpenExport> {
    if (signal?.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
    // fetch's signal also ends the body: the headers' timeout is a timer, cleared once they are in.
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const close = () => {
      signal?.removeEventListener('abort', onAbort);
      controller.abort();
    };
    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const response = await this.fetchImpl(href, {
        method: 'GET',
        headers: { accept: 'application/x-ndjson', 'access-token': this.options.token },
        signal: controller.signal,
      });
      const type = response.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
      if (response.ok && type === 'application/x-ndjson') {
        clearTimeout(timer);
        return {
          ...exportHeaders(response),
          body: response.body,
          signal: controller.signal,
          idleMs: timeoutMs,
          close,
        };
      }
      throw exportRefusal(href, response, response.ok ? undefined : await response.text());
    } catch (error) {
      close();
      if (error instanceof LoyaltyApiError) throw error;
      if (signal?.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
      throw new LoyaltyApiError(
        'NETWORK_ERROR',
        timedOut
          ? `No answer from ${href} within ${timeoutMs} ms`
          : `Cannot reach ${href}: ${(error as Error).message}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private async fetchPage(
    spaceId: number,
    options: WalkOptions,
    after: string | null,
    cacheable: boolean,
  ): Promise<Page> {
    // Typed by the generated argument types: renaming an argument in schema.gql breaks this build.
    const space: GqlQuerySpaceArgs['id'] = spaceId;
    const args: Pick<GqlSpaceLoyaltyPointsRanksArgs, 'sprintId' | 'cursorAfter' | 'first'> = {
      sprintId: options.sprintId ?? null,
      cursorAfter: after,
      first: options.pageSize ?? null,
    };
    const variables = {
      spaceId: space,
      sprintId: args.sprintId,
      after: args.cursorAfter,
      first: args.first,
    };
    const data = await this.query<{ space: { loyaltyPointsRanks: Page | null } | null }>(
      PAGE_QUERY,
      variables,
      options,
      cacheable,
    );
    const page = required(required(data.space, 'space').loyaltyPointsRanks, 'loyaltyPointsRanks');
    if (!Array.isArray(page.list) || typeof page.pageInfo?.hasNextPage !== 'boolean') {
      throw new LoyaltyApiError('BAD_RESPONSE', 'The server sent a page without list or pageInfo');
    }
    return page;
  }

  private async *walk(spaceId: number, options: WalkOptions): AsyncGenerator<Page> {
    const [minDelay, maxDelay] = this.options.pageDelayMs ?? [200, 500];
    const resumed = options.after ?? null;
    const progress: Progress = {
      pages: 0,
      entries: 0,
      totalCount: 0,
      cursor: resumed,
      retries: 0,
      restarted: false,
    };
    const delivered = new Set<string>();
    let seen = new Set<string>();
    let cursor = resumed;
    for (;;) {
      let page: Page;
      const retriesBefore = this.retryCount;
      try {
        page = await this.fetchPage(spaceId, options, cursor, false);
      } catch (error) {
        if (
          error instanceof LoyaltyApiError &&
          error.code === 'INVALID_CURSOR' &&
          cursor !== resumed &&
          !progress.restarted
        ) {
          progress.restarted = true;
          cursor = resumed;
          seen = new Set();
          continue;
        }
        throw error;
      }
      progress.retries += this.retryCount - retriesBefore;
      const fresh = page.list.filter((entry) => {
        const key = (entry.address?.address ?? `#${entry.rank}`).toLowerCase();
        if (delivered.has(key)) return false;
        delivered.add(key);
        return true;
      });
      const next = page.pageInfo.endCursor;
      yield { ...page, list: fresh };
      // Counted once the caller has the page: a saved cursor never skips an unsaved page.
      progress.pages++;
      progress.entries += fresh.length;
      progress.totalCount = page.totalCount;
      progress.cursor = next ?? progress.cursor;
      options.onProgress?.({ ...progress });
      if (!page.pageInfo.hasNextPage) return;
      if (!next)
        throw new LoyaltyApiError(
          'MISSING_CURSOR',
          'The server said there is a next page but sent no endCursor',
        );
      if (page.list.length === 0) {
        throw new LoyaltyApiError(
          'BAD_RESPONSE',
          'The server sent an empty page that claims a next one: stopping instead of looping',
        );
      }
      if (seen.has(next) || next === cursor) {
        throw new LoyaltyApiError(
          'REPEATED_CURSOR',
          `The server sent a cursor it had sent before (page ${progress.pages}): stopping instead of looping`,
        );
      }
      seen.add(next);
      cursor = next;
      if (maxDelay > 0)
        await sleep(minDelay + Math.random() * (maxDelay - minDelay), options.signal);
    }
  }

  private retryCount = 0;

  private async query<T>(
    query: string,
    variables: Record<string, unknown>,
    options: CallOptions,
    cacheable: boolean,
  ): Promise<T> {
    if (options.signal?.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
    const key = cacheable ? `${query}\u0000${JSON.stringify(variables)}` : '';
    const ttl = this.options.cacheTtlMs ?? 45_000;
    const cached = cacheable && ttl > 0 ? this.cache.get(key) : undefined;
    if (cached && cached.until > Date.now()) return structuredClone(cached.value) as T;
    const value = await this.retrying(
      () => this.send<T>(query, variables, options.signal),
      options.signal,
    );
    if (cacheable && ttl > 0) {
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(key, { until: Date.now() + ttl, value: structuredClone(value) });
    }
    return value;
  }

  /** One request, retried after 429, 503 and network errors: the policy of every call. */
  private async retrying<T>(request: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request();
      } catch (error) {
        if (
          !(error instanceof LoyaltyApiError) ||
          !RETRYABLE.has(error.code) ||
          attempt >= this.retry.maxRetries
        )
          throw error;
        const retryAfter = error.details.retryAfterMs;
        // The server's Retry-After is honoured in full; one longer than we may wait is an answer.
        if (retryAfter !== undefined && retryAfter > this.retry.maxDelayMs) throw error;
        const backoff =
          Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt) *
          (0.5 + Math.random() / 2);
        const wait = Math.max(backoff, (retryAfter ?? 0) + Math.random() * 250);
        this.retryCount++;
        this.options.onRetry?.(error, wait);
        await sleep(wait, signal);
      }
    }
  }

  private async send<T>(
    query: string,
    variables: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    let response: Response;
    let body: { data?: T | null; errors?: EnvelopeError[] } | undefined;
    try {
      const timeout = AbortSignal.timeout(this.options.requestTimeoutMs ?? 30_000);
      response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': this.options.token },
        body: JSON.stringify({ query, variables }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = await response.text();
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        body = undefined;
      }
    } catch (error) {
      if (signal?.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
      throw new LoyaltyApiError(
        'NETWORK_ERROR',
        `Cannot reach ${this.url}: ${(error as Error).message}`,
      );
    }
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    const first = body?.errors?.[0];
    if (first) throw envelopeError(first, response.status, retryAfterMs);
    if (!response.ok || !body?.data) {
      // A proxy's page, an empty 429: classified by the HTTP status alone.
      // A 404 most often means an endpoint given without its path (the service's is /query).
      const hint = response.status === 404 ? `: is ${this.url} the GraphQL endpoint?` : '';
      throw new LoyaltyApiError(
        statusCode(response.status),
        `The server answered ${response.status} without a GraphQL result${hint}`,
        {
          httpStatus: response.status,
          retryAfterMs,
        },
      );
    }
    return body.data;
  }
}

/**
 * The endpoint as an absolute http(s) URL, or a LoyaltyApiError (INVALID_ENDPOINT) that says what
 * is wrong: no path is added or guessed, since services serve GraphQL at different paths.
 */
export function endpointUrl(
  endpoint: unknown,
  option: keyof typeof ENDPOINT_OPTIONS = 'endpoint',
): string {
  const { what, example } = ENDPOINT_OPTIONS[option];
  if (typeof endpoint !== 'string' || endpoint.trim() === '')
    throw new LoyaltyApiError('INVALID_ENDPOINT', `${option} is required: ${what} (${example})`);
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new LoyaltyApiError(
      'INVALID_ENDPOINT',
      `${option} "${endpoint}" is not an absolute URL: give ${what} (${example})`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LoyaltyApiError(
      'INVALID_ENDPOINT',
      `${option} "${endpoint}" must be an http or https URL (${example})`,
    );
  // fetch refuses such URLs with a bare TypeError; the token goes in its header instead.
  if (url.username || url.password)
    throw new LoyaltyApiError(
      'INVALID_ENDPOINT',
      `${option} must not contain a user name or password: the access token is sent in a header`,
    );
  return url.href;
}

const ENDPOINT_OPTIONS = {
  endpoint: {
    what: "the GraphQL endpoint's full URL, path included",
    example: 'e.g. http://localhost:3000/query',
  },
  exportEndpoint: {
    what: "the export endpoint's full URL",
    example: 'e.g. http://localhost:3000/export',
  },
};

/** The export's URL by default: `export` in the GraphQL endpoint's directory, no query string. */
export function exportUrlBeside(graphqlEndpoint: string): string {
  const url = new URL(graphqlEndpoint);
  url.search = '';
  url.hash = '';
  return new URL('export', url).href;
}

interface EnvelopeError {
  message: string;
  extensions?: Record<string, unknown>;
}

function envelopeError(
  error: EnvelopeError,
  status: number,
  retryAfterMs: number | undefined,
): LoyaltyApiError {
  const extensions = error.extensions ?? {};
  return new LoyaltyApiError(
    typeof extensions.code === 'string' ? extensions.code : statusCode(status),
    error.message,
    {
      httpStatus: status,
      category: extensions.category as string | undefined,
      requestId: extensions.request_id as string | undefined,
      retryAfterMs,
    },
  );
}

/** An export whose headers are in and whose rows are still to read. */
interface OpenExport {
  asOf: Date;
  entries: number;
  body: ReadableStream<Uint8Array> | null;
  /** Aborted by the caller's signal or by close(). */
  signal: AbortSignal;
  /** The body may go this long without a byte (requestTimeoutMs) before it counts as cut. */
  idleMs: number;
  close(): void;
}

function exportHeaders(response: Response): { asOf: Date; entries: number } {
  const entries = response.headers.get('x-board-entries')?.trim() ?? '';
  const asOf = new Date(response.headers.get('x-board-as-of') ?? '');
  if (!/^\d+$/.test(entries) || Number.isNaN(asOf.getTime()))
    throw new LoyaltyApiError(
      'BAD_RESPONSE',
      `The server sent an export without a valid X-Board-Entries (${entries || 'none'}) or X-Board-As-Of`,
      { httpStatus: response.status },
    );
  return { asOf, entries: Number(entries) };
}

/**
 * Why an export was not served. A 404 that is not the export's own (SPACE_NOT_FOUND,
 * INVALID_SPRINT_ID), a 405 or 501, or a success that is not NDJSON (a proxy's page) all say the
 * server has no such endpoint: an older version of this service, or another server.
 */
function exportRefusal(
  href: string,
  response: Response,
  text: string | undefined,
): LoyaltyApiError {
  let body: { errors?: EnvelopeError[] } | undefined;
  try {
    body = text ? (JSON.parse(text) as typeof body) : undefined;
  } catch {
    body = undefined;
  }
  const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  const code = first?.extensions?.code;
  const status = response.status;
  if (
    response.ok ||
    (status === 404 && (typeof code !== 'string' || code === 'NOT_FOUND')) ||
    status === 405 ||
    status === 501
  ) {
    return new LoyaltyApiError(
      'EXPORT_NOT_OFFERED',
      `The server offers no consistent export at ${href.split('?')[0]} (it answered ${status})`,
      { httpStatus: status },
    );
  }
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  if (first) return envelopeError(first, status, retryAfterMs);
  return new LoyaltyApiError(
    statusCode(status),
    `The server answered ${status} to the export without an error envelope`,
    { httpStatus: status, retryAfterMs },
  );
}

/** The rows of an open export, read line by line as they arrive and checked as they go. */
async function* exportRows(open: OpenExport): AsyncGenerator<ExportRow> {
  const reader = open.body?.getReader();
  // fetch ends the body on abort; a stand-in fetch (tests, proxies) may not.
  const stop = () => void reader?.cancel().catch(() => undefined);
  open.signal.addEventListener('abort', stop, { once: true });
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let delivered = 0;
  let pending = '';
  const next = (line: string): ExportRow => {
    if (open.signal.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
    const row = exportRow(line, delivered + 1, open.entries);
    delivered++;
    return row;
  };
  try {
    for (let done = !reader; !done;) {
      let chunk: Uint8Array | undefined;
      try {
        const read = await readWithin(reader!, open.idleMs);
        done = read.done;
        chunk = read.value;
      } catch (error) {
        if (open.signal.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
        throw incomplete(delivered, open.entries, (error as Error).message);
      }
      if (open.signal.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
      try {
        pending += done ? decoder.decode() : decoder.decode(chunk, { stream: true });
      } catch {
        throw new LoyaltyApiError('BAD_RESPONSE', 'The export is not valid UTF-8');
      }
      let start = 0;
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
        const line = pending.slice(start, end);
        start = end + 1;
        if (line.trim()) yield next(line);
      }
      pending = pending.slice(start);
      // A row is a hundred bytes or so: a line this long is not an export, whatever it is.
      if (pending.length > 1 << 20)
        throw new LoyaltyApiError('BAD_RESPONSE', 'The export holds a line longer than 1 MiB');
      if (done && pending.trim()) yield next(pending);
    }
    if (delivered < open.entries) throw incomplete(delivered, open.entries);
  } finally {
    // Also when the caller stops early: the connection is not left open.
    open.signal.removeEventListener('abort', stop);
    stop();
    open.close();
  }
}

/**
 * The next chunk of a body, or an error once `idleMs` pass without one: a server that stops
 * sending mid-export (but keeps the connection) does not hang the caller.
 */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number,
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void reader.cancel().catch(() => undefined);
      reject(new Error(`no data for ${idleMs} ms`));
    }, idleMs);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    clearTimeout(timer);
  }
}

function exportRow(line: string, rank: number, entries: number): ExportRow {
  let value: Partial<Record<keyof ExportRow, unknown>> | null;
  try {
    value = JSON.parse(line) as typeof value;
  } catch {
    throw new LoyaltyApiError('BAD_RESPONSE', `Row ${rank} of the export is not JSON`);
  }
  if (
    !value ||
    !Number.isSafeInteger(value.rank) ||
    typeof value.address !== 'string' ||
    (value.username !== null && typeof value.username !== 'string') ||
    typeof value.points !== 'number'
  )
    throw new LoyaltyApiError(
      'BAD_RESPONSE',
      `Row ${rank} of the export is not {rank, address, username, points}`,
    );
  if (rank > entries)
    throw new LoyaltyApiError(
      'BAD_RESPONSE',
      `The export holds more than the ${count(entries)} entries it announced`,
    );
  if (value.rank !== rank)
    throw new LoyaltyApiError(
      'BAD_RESPONSE',
      `The export's ranks do not run 1, 2, 3, ...: row ${rank} has rank ${String(value.rank)}`,
    );
  return { rank, address: value.address, username: value.username, points: value.points };
}

function incomplete(delivered: number, entries: number, cause?: string): LoyaltyApiError {
  return new LoyaltyApiError(
    'INCOMPLETE_EXPORT',
    `The export ended after ${count(delivered)} of ${count(entries)} entries${cause ? ` (${cause})` : ''}`,
  );
}

const count = (n: number) => n.toLocaleString('en-US');

function required<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined)
    throw new LoyaltyApiError('BAD_RESPONSE', `The server sent no ${what} and no error`);
  return value;
}

/** What an HTTP status alone says, for answers without a GraphQL error. */
function statusCode(status: number): string {
  if (status === 429) return 'RATE_LIMIT_EXCEEDED';
  if (status === 502 || status === 503 || status === 504) return 'SERVICE_UNAVAILABLE';
  return 'BAD_RESPONSE';
}

/** Retry-After in seconds or as an HTTP date, in milliseconds from now. */
function parseRetryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export function createClient(options: ClientOptions): LoyaltyClient {
  return new LoyaltyClient(options);
}
