import { createClient, type ExportRow } from './index.js';
import type { ClientOptions } from './client.js';
import { LoyaltyApiError } from './errors.js';

const AS_OF = '2026-03-01T12:00:00.123Z';
const encoder = new TextEncoder();

const rows = (n: number, from = 1): ExportRow[] =>
  Array.from({ length: n }, (_, i) => ({
    rank: from + i,
    address: `0xA${from + i}`,
    username: i % 2 ? null : `user${from + i}`,
    points: 1000 - i,
  }));
const ndjson = (list: unknown[]) => list.map((row) => `${JSON.stringify(row)}\n`).join('');

interface Body {
  /** Chunks delivered one per read; a string is UTF-8 encoded first. */
  chunks: Array<string | Uint8Array>;
  /** After the chunks, the stream fails with this instead of ending (a destroyed connection). */
  failWith?: Error;
  /** Before each chunk after the first. */
  delayMs?: number;
}

/** The export's success answer, its body streamed chunk by chunk. */
function exported(entries: number, body: Body, headers: Record<string, string> = {}) {
  return (signal?: AbortSignal) => {
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i > 0 && body.delayMs) await new Promise((r) => setTimeout(r, body.delayMs));
        if (signal?.aborted) return;
        const chunk = body.chunks[i++];
        if (chunk === undefined) {
          if (body.failWith) controller.error(body.failWith);
          else controller.close();
          return;
        }
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      },
      cancel() {
        cancelled.push(true);
      },
    });
    return new Response(stream, {
      status: 200,
      headers: {
        'content-type': 'application/x-ndjson',
        'x-board-entries': String(entries),
        'x-board-as-of': AS_OF,
        'cache-control': 'no-store',
        ...headers,
      },
    });
  };
}
const cancelled: boolean[] = [];

function envelope(status: number, code: string, message: string, headers = {}) {
  return () =>
    new Response(
      JSON.stringify({
        errors: [
          {
            message,
            extensions: {
              code,
              category: status === 404 ? 'NOT_FOUND' : 'RATE_LIMIT',
              http_status: status,
              request_id: 'req-1',
              timestamp: AS_OF,
            },
          },
        ],
      }),
      { status, headers: { 'content-type': 'application/json', ...headers } },
    );
}

type Answer = (signal?: AbortSignal) => Response | Promise<Response>;

/** A fetch that answers each request with the next of `answers` and records what was asked. */
function server(...answers: Answer[]) {
  const requests: Array<{ url: string; init: RequestInit | undefined }> = [];
  const fetch = ((url: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: url instanceof Request ? url.url : url.toString(), init });
    const answer = answers[Math.min(requests.length, answers.length) - 1];
    return Promise.resolve(answer(init?.signal ?? undefined));
  }) as typeof globalThis.fetch;
  return { requests, fetch };
}

const client = (fetch: typeof globalThis.fetch, options: Partial<ClientOptions> = {}) =>
  createClient({
    endpoint: 'http://localhost:3000/query',
    token: 'secret-token',
    fetch,
    retry: { baseDelayMs: 1 },
    ...options,
  });

async function readAll(exported: AsyncIterable<ExportRow>): Promise<ExportRow[]> {
  const list: ExportRow[] = [];
  for await (const row of exported) list.push(row);
  return list;
}

/** What a promise rejects with (fails when it resolves). */
async function failure(promise: Promise<unknown>): Promise<LoyaltyApiError> {
  const outcome = await promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(LoyaltyApiError);
  return outcome as LoyaltyApiError;
}

beforeEach(() => cancelled.splice(0));

describe('exportBoard: where it asks', () => {
  it.each([
    ['http://localhost:3000/query', 'http://localhost:3000/export'],
    ['https://api.example.com/v2/graphql', 'https://api.example.com/v2/export'],
    ['https://api.example.com/graphql?tenant=7', 'https://api.example.com/export'],
    ['https://api.example.com/v2/graphql/', 'https://api.example.com/v2/graphql/export'],
  ])('beside the GraphQL endpoint %s: %s', async (endpoint, url) => {
    const { requests, fetch } = server(exported(0, { chunks: [] }));
    await client(fetch, { endpoint }).exportBoard(7);
    expect(requests.map((r) => r.url)).toEqual([`${url}?spaceId=7&format=ndjson`]);
  });

  it('at exportEndpoint when given, with the sprint, the token and GET', async () => {
    const { requests, fetch } = server(exported(0, { chunks: [] }));
    await client(fetch, { exportEndpoint: 'https://exports.example.com/boards/dump' }).exportBoard(
      7,
      { sprintId: 101 },
    );
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe(
      'https://exports.example.com/boards/dump?spaceId=7&sprintId=101&format=ndjson',
    );
    expect(requests[0].init?.method).toBe('GET');
    expect(requests[0].init?.headers).toMatchObject({
      'access-token': 'secret-token',
      accept: 'application/x-ndjson',
    });
  });

  it('refuses an exportEndpoint that is not an absolute http(s) URL, naming the option', () => {
    expect(() => client(fetch, { exportEndpoint: '/export' })).toThrow(
      expect.objectContaining({
        code: 'INVALID_ENDPOINT',
        message: expect.stringMatching(/^exportEndpoint "\/export" is not an absolute URL/),
      }),
    );
  });
});

describe('exportBoard: the rows', () => {
  it('are parsed line by line across chunk boundaries, multi-byte characters split included', async () => {
    const board: ExportRow[] = [
      { rank: 1, address: '0xAbC', username: 'Zoë 🦊 渡辺', points: 300 },
      { rank: 2, address: '0xDeF', username: null, points: 200 },
      { rank: 3, address: '0x123', username: 'a,"b"\nc', points: 100 },
    ];
    const bytes = encoder.encode(ndjson(board).trimEnd()); // the last line without its newline
    // One byte per chunk splits every line and every multi-byte character somewhere.
    const chunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    const { fetch } = server(exported(3, { chunks }));
    const result = await client(fetch).exportBoard(1);
    expect(result.asOf).toEqual(new Date(AS_OF));
    expect(result.entries).toBe(3);
    expect(await readAll(result)).toEqual(board);
  });

  it('are delivered as they arrive, with no time limit on the body as a whole', async () => {
    const board = rows(4);
    const { fetch } = server(
      exported(4, { chunks: board.map((row) => `${JSON.stringify(row)}\n`), delayMs: 60 }),
    );
    // 240 ms in all, never 100 ms without a byte.
    const result = await client(fetch, { requestTimeoutMs: 100 }).exportBoard(1);
    expect(await readAll(result)).toEqual(board);
  });

  it('end in an INCOMPLETE_EXPORT error when the body stalls for longer than requestTimeoutMs', async () => {
    const board = rows(3);
    const { fetch } = server(
      exported(3, { chunks: board.map((row) => `${JSON.stringify(row)}\n`), delayMs: 250 }),
    );
    const result = await client(fetch, { requestTimeoutMs: 100 }).exportBoard(1);
    expect(await failure(readAll(result))).toMatchObject({
      code: 'INCOMPLETE_EXPORT',
      message: 'The export ended after 1 of 3 entries (no data for 100 ms)',
    });
  });

  it('end in an INCOMPLETE_EXPORT error when the body ends before the announced count', async () => {
    const { fetch } = server(exported(5000, { chunks: [ndjson(rows(812))] }));
    const result = await client(fetch).exportBoard(1);
    const seen: ExportRow[] = [];
    const error = await failure(
      (async () => {
        for await (const row of result) seen.push(row);
      })(),
    );
    expect(error).toMatchObject({
      code: 'INCOMPLETE_EXPORT',
      message: 'The export ended after 812 of 5,000 entries',
    });
    expect(seen).toHaveLength(812);
  });

  it('end in INCOMPLETE_EXPORT, never retried, when the connection breaks mid-body', async () => {
    const { requests, fetch } = server(
      exported(10, {
        chunks: [ndjson(rows(3)), '{"rank":4,"addr'],
        failWith: new TypeError('terminated'),
      }),
    );
    const retries: string[] = [];
    const result = await client(fetch, { onRetry: (e) => retries.push(e.code) }).exportBoard(1);
    const error = await failure(readAll(result));
    expect(error).toMatchObject({
      code: 'INCOMPLETE_EXPORT',
      message: 'The export ended after 3 of 10 entries (terminated)',
    });
    expect(requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it.each([
    ['a gap', [...rows(2), ...rows(1, 4)], 4, /ranks do not run 1, 2, 3, \.\.\.: row 3 has rank 4/],
    ['a repeat', [...rows(2), ...rows(1, 2)], 3, /row 3 has rank 2/],
    ['not starting at 1', rows(2, 2), 2, /row 1 has rank 2/],
    ['more rows than announced', rows(3), 2, /more than the 2 entries it announced/],
    ['a row of another shape', [{ rank: 1, address: null, points: 3 }], 1, /not \{rank, address/],
    ['a line that is not JSON', ['<html>'], 1, /Row 1 of the export is not JSON/],
  ])('are refused as BAD_RESPONSE on %s', async (_, list, entries, message) => {
    const body = list.map((row) => (typeof row === 'string' ? `${row}\n` : ndjson([row]))).join('');
    const { fetch } = server(exported(entries, { chunks: [body] }));
    const error = await failure(readAll(await client(fetch).exportBoard(1)));
    expect(error).toMatchObject({ code: 'BAD_RESPONSE', message: expect.stringMatching(message) });
  });

  it('are read once, and stopping early closes the connection', async () => {
    const { fetch } = server(exported(3, { chunks: rows(3).map((r) => ndjson([r])) }));
    const result = await client(fetch).exportBoard(1);
    for await (const row of result) if (row.rank === 1) break;
    expect(cancelled).toEqual([true]);
    expect(() => result[Symbol.asyncIterator]()).toThrow(/read once/);
  });

  it('stop with ABORTED when the signal aborts mid-body', async () => {
    const controller = new AbortController();
    const { fetch } = server(exported(3, { chunks: rows(3).map((r) => ndjson([r])), delayMs: 50 }));
    const result = await client(fetch).exportBoard(1, { signal: controller.signal });
    const seen: number[] = [];
    const error = await failure(
      (async () => {
        for await (const row of result) {
          seen.push(row.rank);
          controller.abort();
        }
      })(),
    );
    expect(error.code).toBe('ABORTED');
    expect(seen).toEqual([1]);
  });
});

describe('exportBoard: before the body', () => {
  it('retries 429 after its Retry-After, then 503 and network errors, telling onRetry', async () => {
    let calls = 0;
    const fetch = ((_url: string | URL | Request, init?: RequestInit) => {
      calls++;
      if (calls === 1)
        return Promise.resolve(
          envelope(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded', { 'retry-after': '1' })(),
        );
      if (calls === 2) return Promise.resolve(new Response('<html>busy</html>', { status: 503 }));
      if (calls === 3) return Promise.reject(new TypeError('fetch failed'));
      return Promise.resolve(exported(2, { chunks: [ndjson(rows(2))] })(init?.signal ?? undefined));
    }) as typeof globalThis.fetch;
    const retries: Array<[string, number]> = [];
    const started = Date.now();
    const result = await client(fetch, {
      onRetry: (error, wait) => retries.push([error.code, wait]),
    }).exportBoard(1);
    expect(await readAll(result)).toEqual(rows(2));
    expect(retries.map(([code]) => code)).toEqual([
      'RATE_LIMIT_EXCEEDED',
      'SERVICE_UNAVAILABLE',
      'NETWORK_ERROR',
    ]);
    expect(retries[0][1]).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('times out a server that sends no headers, as a network error, and retries it', async () => {
    let calls = 0;
    const silent = ((_url: string | URL | Request, init?: RequestInit) => {
      calls++;
      return new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    }) as typeof globalThis.fetch;
    const error = await failure(
      client(silent, {
        requestTimeoutMs: 50,
        retry: { maxRetries: 1, baseDelayMs: 1 },
      }).exportBoard(1),
    );
    expect(error).toMatchObject({
      code: 'NETWORK_ERROR',
      message: expect.stringContaining('50 ms'),
    });
    expect(calls).toBe(2);
  });

  it.each([
    [404, 'SPACE_NOT_FOUND', 'Space not found'],
    [404, 'INVALID_SPRINT_ID', 'Invalid sprint ID'],
    [403, 'INSUFFICIENT_SCOPE', "Access token lacks the 'query' scope"],
    [401, 'INVALID_TOKEN', 'Invalid access token'],
    [400, 'INVALID_ARGUMENT', 'Unknown parameter'],
  ])('throws the envelope of a %i %s, not retried', async (status, code, message) => {
    const { requests, fetch } = server(envelope(status, code, message));
    const error = await failure(client(fetch).exportBoard(404));
    expect(error).toMatchObject({
      code,
      message,
      details: { httpStatus: status, requestId: 'req-1' },
    });
    expect(requests).toHaveLength(1);
  });

  it.each([
    ['an older service: 404 NOT_FOUND', envelope(404, 'NOT_FOUND', 'Not Found')],
    ['a 404 page', () => new Response('<html>Not Found</html>', { status: 404 })],
    ['a 404 of another JSON shape', () => Response.json({ statusCode: 404 }, { status: 404 })],
    ['405 without a body', () => new Response(null, { status: 405 })],
    ['405 METHOD_NOT_ALLOWED', envelope(405, 'METHOD_NOT_ALLOWED', 'Method not allowed')],
    [
      'a page served for every path',
      () => new Response('<html>app</html>', { headers: { 'content-type': 'text/html' } }),
    ],
  ])('says EXPORT_NOT_OFFERED on %s, at once', async (_, answer) => {
    const { requests, fetch } = server(answer);
    const error = await failure(client(fetch).exportBoard(1));
    expect(error).toMatchObject({
      code: 'EXPORT_NOT_OFFERED',
      message: expect.stringContaining('http://localhost:3000/export'),
    });
    expect(requests).toHaveLength(1);
  });

  it('refuses an export whose headers do not say how many entries it holds', async () => {
    const { fetch } = server(exported(0, { chunks: [] }, { 'x-board-entries': 'many' }));
    await expect(client(fetch).exportBoard(1)).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
  });

  it('stops with ABORTED when aborted before the headers, or while it waits to retry', async () => {
    const early = new AbortController();
    early.abort();
    const { requests, fetch } = server(exported(0, { chunks: [] }));
    await expect(client(fetch).exportBoard(1, { signal: early.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(requests).toHaveLength(0);

    const waiting = new AbortController();
    const limited = server(
      envelope(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit', { 'retry-after': '5' }),
    );
    const pending = client(limited.fetch, {
      onRetry: () => setTimeout(() => waiting.abort(), 10),
    }).exportBoard(1, { signal: waiting.signal });
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    expect(limited.requests).toHaveLength(1);
  });
});
