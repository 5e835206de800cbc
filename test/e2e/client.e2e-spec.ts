import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { buildSchema, parse, validate } from 'graphql';
import {
  CLIENT_DOCUMENTS,
  createClient,
  LoyaltyApiError,
  type ClientOptions,
  type ExportRow,
  type Progress,
} from '../../packages/client/src';
import { bruteForceBoard, PointsFixture, seeded } from '../utils/board-model';
import { scratchPath } from '../utils/scratch-files';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const ROOT = join(__dirname, '..', '..');
const CLIENT = join(ROOT, 'packages', 'client');
const run = promisify(execFile);

/** 2,600 addresses on space 1 (52 pages of 50), as the records `import` would read. */
function fixture(): { records: Array<Record<string, unknown>>; events: PointsFixture[] } {
  const rand = seeded(11);
  const events: PointsFixture[] = Array.from({ length: 2600 }, (_, i) => ({
    key: `c${i}`,
    spaceId: 1,
    address: `0xC${i.toString(16).padStart(6, '0')}`,
    points: 1 + Math.floor(rand() * 400),
    occurredAt: new Date(Date.UTC(2026, 0, 1 + (i % 28))).toISOString(),
  }));
  const records = [
    { type: 'space', id: 1, name: 'Client space' },
    { type: 'quest', id: 'q1', spaceId: 1, name: 'Quest one', status: 'Active' },
    ...events.map((e) => ({ type: 'points', ...e })),
  ];
  return { records, events };
}

const SPRINT = {
  type: 'sprint',
  id: 101,
  spaceId: 1,
  name: 'Second week',
  startTime: '2026-01-08T00:00:00Z',
  endTime: '2026-01-15T00:00:00Z',
};
/** Names to carry through an export: none, multi-byte, and CSV's special characters. */
const PROFILES = [
  { type: 'profile', address: '0xC000001', username: 'Zoë 🦊 渡辺' },
  { type: 'profile', address: '0xC000002', username: '=a,"b"' },
  { type: 'profile', address: '0xC000003', username: 'plain' },
];

/**
 * A stand-in in front of the app: POST /query is passed on; GET /export is answered by `exports`
 * (default: a 404 page, as a server without the endpoint would).
 */
async function proxy(
  app: TestApp,
  exports?: (upstream: Response, res: ServerResponse) => Promise<void>,
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const origin = new URL(app.url).origin;
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const upstream = await fetch(`${origin}${req.url}`, {
      method: req.method,
      headers: {
        'content-type': req.headers['content-type'] ?? 'application/json',
        'access-token': String(req.headers['access-token']),
      },
      body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
    });
    if (req.url?.startsWith('/export') && exports) return exports(upstream, res);
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  };
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url?.split('?')[0]}`);
    if (req.url?.startsWith('/export') && !exports) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>Not Found</body></html>');
      return;
    }
    forward(req, res).catch((error: Error) => res.destroy(error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/query`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A walk's entries as the rows an export holds. */
const asRow = (entry: {
  rank: number;
  points: number;
  address: { address: string; username?: string | null } | null;
}): ExportRow => ({
  rank: entry.rank,
  address: entry.address!.address,
  username: entry.address!.username ?? null,
  points: entry.points,
});

const ranked = (events: PointsFixture[]) =>
  bruteForceBoard(events, 1).map((e) => `${e.rank}:${e.addressKey}:${e.points}`);

describe('the TypeScript client against the real service', () => {
  let db: TestDatabase;
  let t: TestApp;
  let events: PointsFixture[];
  let expected: string[];
  const clientFor = (app: TestApp, options: Partial<ClientOptions> = {}) =>
    createClient({
      endpoint: app.url,
      token: app.token,
      pageDelayMs: [0, 0],
      cacheTtlMs: 0,
      ...options,
    });

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    const data = fixture();
    events = data.events;
    expected = ranked(events);
    t = await startTestApp('sqlite', {}, db);
    await t.load(data.records);
  });
  afterAll(async () => {
    await t?.app.close();
    await db?.drop();
  });

  it('sends only queries valid against schema.gql, and its types are generated from it', async () => {
    const schema = buildSchema(readFileSync(join(ROOT, 'schema.gql'), 'utf8'));
    for (const [name, document] of Object.entries(CLIENT_DOCUMENTS)) {
      expect([name, validate(schema, parse(document)).map((e) => e.message)]).toEqual([name, []]);
    }
    await expect(
      run(process.execPath, ['scripts/generate-client-types.js', '--check'], { cwd: ROOT }),
    ).resolves.toBeDefined();
  });

  it('walks a whole board: every entry once, in rank order, with progress', async () => {
    const progress: Progress[] = [];
    const seen: string[] = [];
    for await (const entry of clientFor(t).leaderboard(1, {
      onProgress: (p) => progress.push(p),
    })) {
      seen.push(`${entry.rank}:${entry.address?.address.toLowerCase()}:${entry.points}`);
    }
    expect(seen).toEqual(expected);
    expect(progress).toHaveLength(Math.ceil(expected.length / 50));
    expect(progress.at(-1)).toMatchObject({
      entries: expected.length,
      totalCount: expected.length,
      restarted: false,
    });
  });

  it('finds an address at depth, by the server lookup or by walking, and gives up at maxPages', async () => {
    const deep = bruteForceBoard(events, 1)[1234];
    const client = clientFor(t);
    await expect(
      client.findRank(1, deep.addressKey.toUpperCase().replace('0X', '0x')),
    ).resolves.toMatchObject({
      found: true,
      via: 'extension',
      entry: { rank: deep.rank, points: deep.points },
    });
    await expect(
      client.findRank(1, deep.addressKey, { useExtension: false }),
    ).resolves.toMatchObject({
      found: true,
      via: 'walk',
      pages: Math.ceil(deep.rank / 50),
      entry: { rank: deep.rank },
    });
    await expect(
      client.findRank(1, deep.addressKey, { useExtension: false, maxPages: 3 }),
    ).resolves.toEqual({
      found: false,
      reason: 'page-limit',
      pages: 3,
      via: 'walk',
    });
    await expect(client.findRank(1, '0xnobody')).resolves.toMatchObject({
      found: false,
      reason: 'not-on-board',
    });
  });

  it('falls back to the walk when the server hides the lookup (strict mode)', async () => {
    const strict = await startTestApp('sqlite', { STRICT_MODE: 'true' }, db);
    try {
      const target = bruteForceBoard(events, 1)[120];
      await expect(clientFor(strict).findRank(1, target.addressKey)).resolves.toMatchObject({
        found: true,
        via: 'walk',
        entry: { rank: target.rank },
      });
    } finally {
      await strict.app.close();
    }
  });

  it('retries 429 after Retry-After, paced, and still delivers the whole board', async () => {
    const limited = await startTestApp('sqlite', { RATE_LIMIT_TOKEN: '8/1s' }, db);
    try {
      const waits: number[] = [];
      const client = clientFor(limited, {
        retry: { baseDelayMs: 50 },
        onRetry: (error, wait) => {
          expect(error.code).toBe('RATE_LIMIT_EXCEEDED');
          waits.push(wait);
        },
      });
      const started = Date.now();
      let count = 0;
      for await (const entry of client.leaderboard(1)) count += entry ? 1 : 0;
      expect(count).toBe(expected.length);
      expect(waits.length).toBeGreaterThan(0);
      expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000); // Retry-After: 1, not the 50 ms backoff
      expect(Date.now() - started).toBeGreaterThanOrEqual(5000); // 52 pages at 8 a second
    } finally {
      await limited.app.close();
    }
  });

  /** A fetch that lets a test tamper with request n's cursor or response n's body. */
  function tampering(tamper: { cursorAt?: number[]; repeatCursorAt?: number }) {
    let n = 0;
    let lastCursor: string | null = null;
    return async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      n++;
      const body = JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as {
        query: string;
        variables: Record<string, unknown>;
      };
      if (tamper.cursorAt?.includes(n) && typeof body.variables.after === 'string')
        body.variables.after = `${body.variables.after}x`;
      const response = await fetch(url, { ...init, body: JSON.stringify(body) });
      const text = await response.text();
      const parsed = JSON.parse(text);
      const info = parsed.data?.space?.loyaltyPointsRanks?.pageInfo;
      if (info && n === tamper.repeatCursorAt && lastCursor) info.endCursor = lastCursor;
      if (info) lastCursor = info.endCursor;
      return new Response(JSON.stringify(parsed), {
        status: response.status,
        headers: response.headers,
      });
    };
  }

  it('restarts from the first page once when a cursor turns invalid mid-walk', async () => {
    let restarted = false;
    const seen: string[] = [];
    const client = clientFor(t, { fetch: tampering({ cursorAt: [3] }) });
    for await (const entry of client.leaderboard(1, {
      onProgress: (p) => (restarted ||= p.restarted),
    })) {
      seen.push(`${entry.rank}:${entry.address?.address.toLowerCase()}:${entry.points}`);
    }
    expect(restarted).toBe(true);
    expect(seen).toEqual(expected);
    const twice = clientFor(t, { fetch: tampering({ cursorAt: [3, 6] }) });
    const walk = async () => {
      for await (const entry of twice.leaderboard(1)) void entry;
    };
    await expect(walk()).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('stops with a clear error on a repeated cursor instead of looping', async () => {
    const client = clientFor(t, { fetch: tampering({ repeatCursorAt: 3 }) });
    const walk = async () => {
      for await (const entry of client.leaderboard(1)) void entry;
    };
    const error = await walk().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoyaltyApiError);
    expect(error).toMatchObject({
      code: 'REPEATED_CURSOR',
      message: expect.stringContaining('stopping instead of looping'),
    });
  });

  it('reports server errors as typed errors with the envelope code, caches, and can be cancelled', async () => {
    await expect(clientFor(t).space(404)).rejects.toMatchObject({
      code: 'SPACE_NOT_FOUND',
      details: { category: 'NOT_FOUND' },
    });
    await expect(clientFor(t).quest('q1')).resolves.toEqual({
      name: 'Quest one',
      status: 'Active',
      participantsCount: 0,
    });
    let requests = 0;
    const counting = (async (url: string | URL | Request, init?: RequestInit) => {
      requests++;
      return fetch(url, init);
    }) as typeof fetch;
    const cached = createClient({ endpoint: t.url, token: t.token, fetch: counting });
    await cached.page(1);
    await cached.page(1);
    expect(requests).toBe(1);
    const controller = new AbortController();
    const slow = createClient({
      endpoint: t.url,
      token: t.token,
      pageDelayMs: [200, 500],
      cacheTtlMs: 0,
    });
    setTimeout(() => controller.abort(), 100);
    const walk = async () => {
      for await (const entry of slow.leaderboard(1, { signal: controller.signal })) void entry;
    };
    await expect(walk()).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('never repeats an entry through .pages() after a restart, even with the cache on', async () => {
    const client = createClient({
      endpoint: t.url,
      token: t.token,
      pageDelayMs: [0, 0],
      fetch: tampering({ cursorAt: [4] }),
    });
    const rows: string[] = [];
    for await (const page of client.leaderboard(1).pages()) {
      rows.push(
        ...page.list.map((e) => `${e.rank}:${e.address?.address.toLowerCase()}:${e.points}`),
      );
    }
    expect(rows).toEqual(expected);
  });

  it('delivers every address once while the board moves under the walk', async () => {
    await t.load([
      { type: 'space', id: 2, name: 'Moving' },
      ...Array.from({ length: 120 }, (_, i) => ({
        type: 'points',
        key: `m${i}`,
        spaceId: 2,
        address: `0xM${i}`,
        points: 1000 - i,
        occurredAt: '2026-01-01T00:00:00Z',
      })),
    ]);
    const delivered: string[] = [];
    let pages = 0;
    for await (const page of clientFor(t).leaderboard(2).pages()) {
      delivered.push(...page.list.map((e) => e.address!.address.toLowerCase()));
      if (++pages === 1) {
        // Rank 5 drops off the board after page 1: everyone below moves up one place.
        await t.load([
          {
            type: 'points',
            key: 'm-drop',
            spaceId: 2,
            address: '0xM4',
            points: -100_000,
            occurredAt: '2026-01-02T00:00:00Z',
          },
        ]);
      }
    }
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(delivered.sort()).toEqual(Array.from({ length: 120 }, (_, i) => `0xm${i}`).sort());
  });

  it('waits 200-500 ms between pages by default', async () => {
    const times: number[] = [];
    const timing = (async (url: string | URL | Request, init?: RequestInit) => {
      times.push(Date.now());
      return fetch(url, init);
    }) as typeof fetch;
    const client = createClient({ endpoint: t.url, token: t.token, fetch: timing });
    let pages = 0;
    for await (const page of client.leaderboard(1).pages()) if (++pages === 4 || !page) break;
    const gaps = times.slice(1).map((time, i) => time - times[i]);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(195);
      expect(gap).toBeLessThan(700);
    }
  });

  it('gives up at once when Retry-After is longer than it may wait, and retries a 503 without a GraphQL body', async () => {
    const limited = await startTestApp('sqlite', { RATE_LIMIT_TOKEN: '2/30s' }, db);
    try {
      const client = clientFor(limited, { retry: { maxDelayMs: 2_000 } });
      await client.space(1);
      await client.space(1);
      const started = Date.now();
      await expect(client.space(1)).rejects.toMatchObject({
        code: 'RATE_LIMIT_EXCEEDED',
        details: { httpStatus: 429 },
      });
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await limited.app.close();
    }
    let calls = 0;
    const flaky = (async (url: string | URL | Request, init?: RequestInit) => {
      if (++calls <= 2)
        return new Response('<html>Bad gateway</html>', {
          status: 503,
          headers: { 'retry-after': '0' },
        });
      return fetch(url, init);
    }) as typeof fetch;
    const retried: string[] = [];
    const client = clientFor(t, {
      fetch: flaky,
      retry: { baseDelayMs: 10 },
      onRetry: (error) => retried.push(error.code),
    });
    await expect(client.space(1)).resolves.toMatchObject({ name: 'Client space' });
    expect(retried).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  });

  it('times a request out instead of waiting on a server that never answers', async () => {
    let calls = 0;
    const silent = ((_url: string | URL | Request, init?: RequestInit) => {
      calls++;
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () =>
          reject(new Error('The operation was aborted')),
        );
      });
    }) as typeof fetch;
    const client = clientFor(t, {
      fetch: silent,
      requestTimeoutMs: 100,
      retry: { maxRetries: 1, baseDelayMs: 10 },
    });
    const started = Date.now();
    await expect(client.space(1)).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(calls).toBe(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  describe('command line', () => {
    const cli = (args: string[], env: Record<string, string> = {}) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(CLIENT, 'dist', 'esm', 'cli.js'), ...args], {
          env: {
            ...process.env,
            LOYALTY_ENDPOINT: t.url,
            LOYALTY_TOKEN: t.token,
            ...env,
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c) => (stdout += c));
        child.stderr.on('data', (c) => (stderr += c));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });

    it('documents every option in --help', async () => {
      const help = await cli(['--help']);
      expect(help.code).toBe(0);
      for (const option of [
        '--space',
        '--sprint',
        '--limit',
        '--address',
        '--max-pages',
        '--walk',
        '--format',
        '--out',
        '--resume-from',
        '--page-delay',
        '--endpoint',
        'LOYALTY_TOKEN',
        'LOYALTY_ENDPOINT',
      ]) {
        expect(help.stdout).toContain(option);
      }
    });

    it('takes the deprecated LOYALTY_URL with a warning, and sends the token nowhere unnamed', async () => {
      const base = t.url.replace(/\/query$/, '');
      const old = await cli(['top', '--space', '1', '--limit', '2'], {
        LOYALTY_ENDPOINT: '',
        LOYALTY_URL: base,
      });
      expect(old).toMatchObject({ code: 0 });
      expect(old.stdout.trim().split('\n')).toHaveLength(2);
      expect(old.stderr).toBe(
        "LOYALTY_URL is deprecated: set LOYALTY_ENDPOINT to the GraphQL endpoint's full URL " +
          `instead (here LOYALTY_ENDPOINT=${base}/query).\n`,
      );
      const none = await cli(['top', '--space', '1'], { LOYALTY_ENDPOINT: '', LOYALTY_URL: '' });
      expect(none).toEqual({
        code: 2,
        stdout: '',
        stderr:
          "set LOYALTY_ENDPOINT (or pass --endpoint) to the GraphQL endpoint's full URL, e.g. " +
          'http://localhost:3000/query: there is no default, so the token goes only where you say\n',
      });
    });

    it('exports a board as CSV equal to the board, and reads the token only from the environment', async () => {
      const out = scratchPath('export-', 'board.csv');
      const result = await cli(['export', '--space', '1', '--out', out, '--page-delay', '0']);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        new RegExp(
          `^Exported ${expected.length} entries as of \\d{4}-\\d\\d-\\d\\dT[\\d:]+\\.\\d{3}Z \\(consistent snapshot\\)\\.\\n$`,
        ),
      );
      expect(readdirSync(dirname(out))).toEqual(['board.csv']); // no temporary file left
      const rows = readFileSync(out, 'utf8').trim().split('\n');
      expect(rows[0]).toBe('rank,address,username,points');
      expect(
        rows
          .slice(1)
          .map((row) => row.split(','))
          .map(([rank, address, , points]) => `${rank}:${address.toLowerCase()}:${points}`),
      ).toEqual(expected);
      expect((await cli(['top', '--space', '1', '--token', 'x'])).code).toBe(2);
      expect((await cli(['top', '--space', '1'], { LOYALTY_TOKEN: '' })).stderr).toContain(
        'LOYALTY_TOKEN',
      );
    });

    it('writes the same NDJSON from the snapshot as from a walk (--walk) of the still board', async () => {
      const snapshot = await cli(['export', '--space', '1', '--format', 'ndjson']);
      const walk = await cli([
        'export',
        '--space',
        '1',
        '--format',
        'ndjson',
        '--walk',
        '--page-delay',
        '0',
      ]);
      expect([snapshot.code, walk.code]).toEqual([0, 0]);
      expect(snapshot.stderr).toContain('(consistent snapshot)');
      expect(walk.stderr).toBe(`Exported ${expected.length} entries.\n`);
      expect(snapshot.stdout).toBe(walk.stdout);
      const first = JSON.parse(snapshot.stdout.split('\n')[0]);
      expect(Object.keys(first)).toEqual(['rank', 'address', 'username', 'points']);
      expect(first.username).toBeNull();
    });

    it('walks, after a warning, a server without the export, and still writes the whole board', async () => {
      const old = await proxy(t);
      try {
        const out = scratchPath('fallback-', 'board.csv');
        const result = await cli(['export', '--space', '1', '--out', out, '--page-delay', '0'], {
          LOYALTY_ENDPOINT: old.url,
        });
        expect(result.code).toBe(0);
        expect(result.stderr).toContain(
          'Warning: the server offers no consistent export, so the board is walked page by page.',
        );
        expect(result.stderr).toContain(`Exported ${expected.length} entries.\n`);
        expect(result.stderr).not.toContain('snapshot)');
        expect(old.seen[0]).toBe('GET /export');
        expect(old.seen.slice(1).every((request) => request === 'POST /query')).toBe(true);
        const rows = readFileSync(out, 'utf8').trim().split('\n');
        expect(
          rows.slice(1).map((row) => {
            const [rank, address, , points] = row.split(',');
            return `${rank}:${address.toLowerCase()}:${points}`;
          }),
        ).toEqual(expected);
      } finally {
        await old.close();
      }
    });

    it('leaves no file that looks whole when the export breaks off, and an older one as it was', async () => {
      // The real export, cut after 20 kB as a server that fails mid-stream cuts it.
      const cut = await proxy(t, async (upstream, res) => {
        const pass = ['content-type', 'x-board-entries', 'x-board-as-of'];
        res.writeHead(
          upstream.status,
          Object.fromEntries(pass.map((h) => [h, upstream.headers.get(h) ?? ''])),
        );
        let sent = 0;
        for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
          res.write(chunk);
          if ((sent += chunk.length) > 20_000) break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
        res.destroy();
      });
      try {
        const out = scratchPath('cut-', 'board.csv');
        writeFileSync(out, 'yesterday\n');
        const result = await cli(['export', '--space', '1', '--out', out], {
          LOYALTY_ENDPOINT: cut.url,
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(
          new RegExp(
            `The export ended after [\\d,]+ of ${expected.length.toLocaleString('en-US')} entries`,
          ),
        );
        expect(result.stderr).toContain(`Nothing was written to ${out}.`);
        expect(readFileSync(out, 'utf8')).toBe('yesterday\n');
        expect(readdirSync(dirname(out))).toEqual(['board.csv']);
      } finally {
        await cut.close();
      }
    });

    it('resumes an export with exactly the rest, and refuses an invalid resume cursor', async () => {
      let cursor: string | null = null;
      let pages = 0;
      for await (const page of clientFor(t).leaderboard(1).pages()) {
        cursor = page.pageInfo.endCursor;
        if (++pages === 3) break;
      }
      const out = scratchPath('resume-', 'rest.ndjson');
      const rest = await cli([
        'export',
        '--space',
        '1',
        '--format',
        'ndjson',
        '--out',
        out,
        '--resume-from',
        cursor!,
        '--page-delay',
        '0',
      ]);
      expect(rest.code).toBe(0);
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { rank: number });
      expect(rows.map((r) => r.rank)).toEqual(
        Array.from({ length: expected.length - 150 }, (_, i) => 151 + i),
      );
      const bad = await cli([
        'export',
        '--space',
        '1',
        '--out',
        out,
        '--resume-from',
        `${cursor}x`,
        '--page-delay',
        '0',
      ]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Invalid cursor');
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(expected.length - 150);
    });

    it('quotes CSV cells and defuses spreadsheet formulas', async () => {
      await t.load([
        { type: 'space', id: 3, name: 'Names' },
        { type: 'profile', address: '0xQ1', username: '=HYPERLINK("x"),"boom"' },
        {
          type: 'points',
          key: 'q1',
          spaceId: 3,
          address: '0xQ1',
          points: 5,
          occurredAt: '2026-01-01T00:00:00Z',
        },
      ]);
      const csv = await cli(['export', '--space', '3', '--page-delay', '0']);
      expect(csv.stdout.trim().split('\n')[1]).toBe('1,0xQ1,"\'=HYPERLINK(""x""),""boom""",5');
      expect((await cli(['top', '--space', '1', '--limt', '2'])).code).toBe(2);
      expect((await cli(['top', '--space', '1', '--token=secret'])).code).toBe(2);
    });

    it('finds a rank and shows the top', async () => {
      const target = bruteForceBoard(events, 1)[77];
      const found = await cli(['find-rank', '--space', '1', '--address', target.addressKey]);
      expect(found.code).toBe(0);
      expect(found.stdout.split('\t').slice(0, 2)).toEqual([
        String(target.rank),
        String(target.points),
      ]);
      // --endpoint wins over LOYALTY_ENDPOINT.
      const top = await cli(['top', '--space', '1', '--limit', '3', '--endpoint', t.url], {
        LOYALTY_ENDPOINT: 'http://127.0.0.1:9/nothing-here',
      });
      expect(
        top.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('\t')[0]),
      ).toEqual(['1', '2', '3']);
      expect((await cli(['find-rank', '--space', '1', '--address', '0xnobody'])).code).toBe(3);
    });
  });
});

describe.each(DB_KINDS)('the consistent export of the real service on %s', (kind) => {
  let t: TestApp;
  let events: PointsFixture[];
  const client = () =>
    createClient({ endpoint: t.url, token: t.token, pageDelayMs: [0, 0], cacheTtlMs: 0 });
  const walk = async (sprintId: number | null) => {
    const rows: ExportRow[] = [];
    for await (const entry of client().leaderboard(1, { sprintId })) rows.push(asRow(entry));
    return rows;
  };
  const exported = async (sprintId: number | null) => {
    const board = await client().exportBoard(1, { sprintId });
    const rows: ExportRow[] = [];
    for await (const row of board) rows.push(row);
    return { board, rows };
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    const data = fixture();
    events = data.events;
    await t.load([...data.records, SPRINT, ...PROFILES]);
  });
  afterAll(() => t?.close());

  it.each([
    ['the whole board', null],
    ['a sprint', SPRINT.id],
  ])('holds the same rows as a walk of %s while it is still', async (_, sprintId) => {
    const before = Date.now();
    const { board, rows } = await exported(sprintId);
    const wanted =
      sprintId === null
        ? bruteForceBoard(events, 1)
        : bruteForceBoard(events, 1, {
            start: SPRINT.startTime,
            end: SPRINT.endTime,
          });
    expect(board.entries).toBe(wanted.length);
    expect(board.asOf.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(board.asOf.getTime()).toBeLessThanOrEqual(Date.now());
    expect(rows).toEqual(await walk(sprintId));
    expect(rows.map((r) => `${r.rank}:${r.address.toLowerCase()}:${r.points}`)).toEqual(
      wanted.map((e) => `${e.rank}:${e.addressKey}:${e.points}`),
    );
    if (sprintId === null)
      expect(
        rows
          .filter((r) => r.username !== null)
          .map((r) => r.username)
          .sort(),
      ).toEqual(PROFILES.map((p) => p.username).sort());
  });

  it('carries the server refusals as their codes', async () => {
    await expect(client().exportBoard(404)).rejects.toMatchObject({
      code: 'SPACE_NOT_FOUND',
      details: { httpStatus: 404 },
    });
    await expect(client().exportBoard(1, { sprintId: 999 })).rejects.toMatchObject({
      code: 'INVALID_SPRINT_ID',
      message: 'Invalid sprint ID',
    });
    const stranger = createClient({ endpoint: t.url, token: 'not-a-token' });
    await expect(stranger.exportBoard(1)).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
      details: { httpStatus: 401 },
    });
  });
});

describe('the client package, installed from its npm pack tarball into a project of its own', () => {
  // npm settings of the npm that runs jest (npx, npm test) must not leak into the consumer's.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)),
  );
  const npm = (args: string[], cwd: string) =>
    run('npm', [...args, '--no-audit', '--no-fund', '--no-update-notifier'], { cwd, env });
  const node = (args: string[], cwd: string) => run(process.execPath, args, { cwd, env });
  let project: string;

  beforeAll(async () => {
    project = scratchPath('client-pack-', 'consumer');
    const dir = dirname(project);
    const packed = await npm(['pack', '--json', '--pack-destination', dir], CLIENT);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [
      { filename: string; files: Array<{ path: string }> },
    ];
    expect(files.map((f) => f.path)).toContain('dist/esm/index.js'); // else: npm run build
    mkdirSync(project);
    const manifest = { name: 'consumer', version: '1.0.0', private: true, type: 'module' };
    writeFileSync(join(project, 'package.json'), JSON.stringify(manifest));
    await npm(['install', join(dir, filename)], project);
  });

  it('brings no other package', async () => {
    const ls = JSON.parse((await npm(['ls', '--all', '--json'], project)).stdout);
    expect(ls.dependencies).toEqual({
      'loyalty-leaderboard-client': expect.objectContaining({ version: '0.2.0' }),
    });
    expect(ls.dependencies['loyalty-leaderboard-client'].dependencies).toBeUndefined();
    expect(readdirSync(join(project, 'node_modules')).sort()).toEqual([
      '.bin',
      '.package-lock.json',
      'loyalty-leaderboard-client',
    ]);
  });

  it('loads by ESM import and by CommonJS require', async () => {
    const probe =
      "console.log([typeof m.createClient, typeof m.LoyaltyClient, new m.LoyaltyApiError('X', 'y') instanceof Error, Object.keys(m.CLIENT_DOCUMENTS).length].join(' '))";
    const esm = await node(
      ['--input-type=module', '-e', `import * as m from 'loyalty-leaderboard-client'; ${probe}`],
      project,
    );
    expect(esm.stdout.trim()).toBe('function function true 4');
    const cjs = await node(
      ['--input-type=commonjs', '-e', `const m = require('loyalty-leaderboard-client'); ${probe}`],
      project,
    );
    expect(cjs.stdout.trim()).toBe('function function true 4');
    // Each condition has its own build, in the format it promises.
    const cjsPath = await node(['-p', "require.resolve('loyalty-leaderboard-client')"], project);
    expect(cjsPath.stdout).toContain(join('loyalty-leaderboard-client', 'dist', 'cjs', 'index.js'));
    const esmPath = await node(
      [
        '--input-type=module',
        '-e',
        "console.log(import.meta.resolve('loyalty-leaderboard-client'))",
      ],
      project,
    );
    expect(esmPath.stdout).toContain('loyalty-leaderboard-client/dist/esm/index.js');
  });

  it('type-checks in a nodenext project, from an ES module and from a CommonJS one', async () => {
    const use = `import { createClient, LoyaltyApiError, type Entry } from 'loyalty-leaderboard-client';
const client = createClient({ endpoint: 'http://localhost:3000/query', token: 't' });
export const entries: AsyncIterable<Entry> = client.leaderboard(1, { sprintId: 2 });
export const isError = (e: unknown): e is LoyaltyApiError => e instanceof LoyaltyApiError;
// @ts-expect-error the endpoint is required
createClient({ token: 't' });
`;
    writeFileSync(join(project, 'esm.mts'), use);
    writeFileSync(join(project, 'cjs.cts'), use);
    const tsconfig = {
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2023', 'dom'],
        types: [],
        strict: true,
        noEmit: true,
      },
      files: ['esm.mts', 'cjs.cts'],
    };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = require.resolve('typescript/bin/tsc'); // the repository's, not the consumer's
    const checked = await node([tsc, '-p', '.', '--listFiles'], project).catch(
      (error: { stdout: string }) => {
        throw new Error(`tsc: ${error.stdout}`);
      },
    );
    const declarations = checked.stdout
      .split('\n')
      .filter((file) => file.includes('loyalty-leaderboard-client/dist/'))
      .map((file) => file.slice(file.indexOf('dist/')))
      .filter((file) => file.endsWith('index.d.ts'));
    expect(declarations.sort()).toEqual(['dist/cjs/index.d.ts', 'dist/esm/index.d.ts']);
  });

  it('runs its command line from node_modules/.bin', async () => {
    const bin = join(project, 'node_modules', '.bin', 'loyalty-client');
    const help = await run(bin, ['--help'], { cwd: project, env });
    expect(help.stdout).toContain('Usage: loyalty-client');
    const bad = await run(bin, ['top', '--space', '1', '--endpoint', 'localhost:3000/query'], {
      cwd: project,
      env: { ...env, LOYALTY_TOKEN: 'x' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('--endpoint') });
  });
});
