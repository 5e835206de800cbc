import { LoyaltyApiError } from './errors';
import type {
  GqlAddress,
  GqlLoyaltyPointsRank,
  GqlPageInfo,
  GqlQuest,
  GqlSpace,
} from './schema-types.generated';

/*
 * A client for API consumers that carries the paging etiquette of SPEC.md sections 4 and 8:
 * cursors until hasNextPage is false, 200-500 ms between pages, boards cached 30-60 s, searches
 * bounded to 100 pages (20 for interactive use), 429 retried after Retry-After, one restart on
 * Invalid cursor, and a stop on a repeated cursor. No NestJS or TypeORM in here.
 */

export type Space = Pick<GqlSpace, 'id' | 'name' | 'description'>;
export type Quest = Pick<GqlQuest, 'name' | 'status' | 'participantsCount'> &
  Partial<Pick<GqlQuest, 'id' | 'type' | 'startTime' | 'endTime' | 'cap'>>;
export type Address = Pick<GqlAddress, 'address' | 'username' | 'avatar'>;
export type Entry = Pick<GqlLoyaltyPointsRank, 'rank' | 'points'> & { address: Address | null };
export interface Page {
  totalCount: number;
  pageInfo: Pick<GqlPageInfo, 'hasNextPage' | 'endCursor'>;
  list: Entry[];
}

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
  /** The service, e.g. https://loyalty.example.com (the /query path is added). */
  baseUrl: string;
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
  private readonly cache = new Map<string, { until: number; value: unknown }>();
  private readonly retry: RetryOptions;
  private readonly fetchImpl: typeof fetch;
  private extension: boolean | undefined;
  private retries = 0;

  constructor(private readonly options: ClientOptions) {
    this.url = options.baseUrl.replace(/\/+$/, '').replace(/\/query$/, '') + '/query';
    this.retry = { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
  }

  async space(id: number, options: CallOptions = {}): Promise<Space> {
    const data = await this.query<{ space: Space }>(SPACE_QUERY, { id }, options, true);
    return data.space;
  }

  async quest(id: string, options: CallOptions = {}): Promise<Quest> {
    const data = await this.query<{ quest: Quest }>(QUEST_QUERY, { id }, options, true);
    return data.quest;
  }

  /** One page of a board, after `after` (null: the first page). */
  async page(spaceId: number, options: WalkOptions = {}): Promise<Page> {
    const variables = {
      spaceId,
      sprintId: options.sprintId ?? null,
      after: options.after ?? null,
      first: options.pageSize ?? null,
    };
    const data = await this.query<{ space: { loyaltyPointsRanks: Page } }>(
      PAGE_QUERY,
      variables,
      options,
      true,
    );
    return data.space.loyaltyPointsRanks;
  }

  /**
   * A whole board, page by page with the etiquette's pause between pages; iterate it for
   * entries, or call `.pages()` for pages. An `Invalid cursor` restarts the walk from the first
   * page once (entries already delivered are not delivered again); a cursor seen twice stops it.
   */
  leaderboard(
    spaceId: number,
    options: WalkOptions = {},
  ): AsyncIterable<Entry> & { pages(): AsyncIterable<Page> } {
    const pages = () => this.walk(spaceId, options);
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        let delivered = 0;
        for await (const page of pages()) {
          for (const entry of page.list) {
            if (entry.rank <= delivered) continue;
            delivered = entry.rank;
            yield entry;
          }
        }
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
        const data = await this.query<{ space: { addressLoyaltyPoints: Entry | null } }>(
          ADDRESS_QUERY,
          { spaceId, address, sprintId: options.sprintId ?? null },
          options,
          true,
        );
        this.extension = true;
        const entry = data.space.addressLoyaltyPoints;
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
    const maxPages =
      options.maxPages ?? this.options.maxSearchPages ?? (this.options.interactive ? 20 : 100);
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

  private async *walk(spaceId: number, options: WalkOptions): AsyncGenerator<Page> {
    const [minDelay, maxDelay] = this.options.pageDelayMs ?? [200, 500];
    const progress: Progress = {
      pages: 0,
      entries: 0,
      totalCount: 0,
      cursor: options.after ?? null,
      retries: 0,
      restarted: false,
    };
    const seen = new Set<string>();
    const retriesBefore = this.retries;
    let cursor = options.after ?? null;
    for (;;) {
      let page: Page;
      try {
        page = await this.page(spaceId, { ...options, after: cursor });
      } catch (error) {
        if (
          error instanceof LoyaltyApiError &&
          error.code === 'INVALID_CURSOR' &&
          !progress.restarted
        ) {
          progress.restarted = true;
          cursor = null;
          seen.clear();
          continue;
        }
        throw error;
      }
      progress.pages++;
      progress.entries += page.list.length;
      progress.totalCount = page.totalCount;
      progress.cursor = page.pageInfo.endCursor ?? progress.cursor;
      progress.retries = this.retries - retriesBefore;
      options.onProgress?.({ ...progress });
      yield page;
      if (!page.pageInfo.hasNextPage) return;
      const next = page.pageInfo.endCursor;
      if (!next)
        throw new LoyaltyApiError(
          'MISSING_CURSOR',
          'The server said there is a next page but sent no endCursor',
        );
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

  private async query<T>(
    query: string,
    variables: Record<string, unknown>,
    options: CallOptions,
    cacheable: boolean,
  ): Promise<T> {
    const key = cacheable ? `${query}\u0000${JSON.stringify(variables)}` : '';
    const ttl = this.options.cacheTtlMs ?? 45_000;
    const cached = cacheable && ttl > 0 ? this.cache.get(key) : undefined;
    if (cached && cached.until > Date.now()) return cached.value as T;
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await this.send<T>(query, variables, options.signal);
        if (cacheable && ttl > 0) {
          if (this.cache.size > 1000) this.cache.clear();
          this.cache.set(key, { until: Date.now() + ttl, value });
        }
        return value;
      } catch (error) {
        if (
          !(error instanceof LoyaltyApiError) ||
          !RETRYABLE.has(error.code) ||
          attempt >= this.retry.maxRetries
        )
          throw error;
        const backoff =
          Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt) *
          (0.5 + Math.random() / 2);
        const retryAfter = error.details.retryAfterMs ?? 0;
        const wait = Math.min(this.retry.maxDelayMs, Math.max(backoff, retryAfter));
        this.retries++;
        this.options.onRetry?.(error, wait);
        await sleep(wait, options.signal);
      }
    }
  }

  private async send<T>(
    query: string,
    variables: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    let response: Response;
    try {
      response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': this.options.token },
        body: JSON.stringify({ query, variables }),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw new LoyaltyApiError('ABORTED', 'Aborted');
      throw new LoyaltyApiError(
        'NETWORK_ERROR',
        `Cannot reach ${this.url}: ${(error as Error).message}`,
      );
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    let body: {
      data?: T | null;
      errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
    };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new LoyaltyApiError(
        'BAD_RESPONSE',
        `The server answered ${response.status} without JSON`,
        { httpStatus: response.status },
      );
    }
    const first = body.errors?.[0];
    if (first) {
      const extensions = first.extensions ?? {};
      throw new LoyaltyApiError(
        typeof extensions.code === 'string' ? extensions.code : 'BAD_RESPONSE',
        first.message,
        {
          httpStatus: response.status,
          category: extensions.category as string | undefined,
          requestId: extensions.request_id as string | undefined,
          ...(Number.isFinite(retryAfter) && retryAfter > 0
            ? { retryAfterMs: retryAfter * 1000 }
            : {}),
        },
      );
    }
    if (!body.data)
      throw new LoyaltyApiError(
        'BAD_RESPONSE',
        `The server answered ${response.status} without data`,
      );
    return body.data;
  }
}

export function createClient(options: ClientOptions): LoyaltyClient {
  return new LoyaltyClient(options);
}
