import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { metricsPortOf } from '../../src/host/app.factory';
import { LeaderboardsService } from '../../src/leaderboards/graphql/leaderboards.service';
import { createServiceLogger } from '../../src/host/logging/service-logger';
import { createTestDatabase, DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const METRICS_TOKEN = 'metrics-secret-0123456789abcdefghijkl';
const SPACE = { type: 'space', id: 1, name: 'Observed' };
const PAGE = '{ space(id: 1) { loyaltyPointsRanks { totalCount list { rank points } } } }';

/** One sample of a Prometheus text exposition, or undefined when it is not there. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      found[pair[1]] = pair[2];
    }
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(match[4]);
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** The package's version, as /health and the logs report it. */
const VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe.each(DB_KINDS)('metrics and request logs on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let ingestToken: string;
  let ingestTokenId: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    const out = new PassThrough();
    out.on('data', (chunk: Buffer) =>
      logLines.push(...chunk.toString().split('\n').filter(Boolean)),
    );
    const log = createServiceLogger({ level: 'info', format: 'json' }, 'production', out);
    t = await startTestApp(kind, { METRICS_TOKEN, RESPONSE_CACHE_MS: '1000' }, undefined, { log });
    base = t.url.replace(/\/query$/, '');
    const created = await t.app.get(AccessTokensService).create('writer', ['ingest']);
    ingestToken = created.token;
    ingestTokenId = created.id;
    await t.load([SPACE]);
  });
  afterAll(() => t?.close());

  const scrape = async () => {
    const response = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };
  const ingest = (body: unknown[]) =>
    fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': ingestToken },
      body: JSON.stringify(body),
    });

  it('refuses GET /metrics on the main port without the metrics token, API tokens included', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { 'access-token': t.token },
      { authorization: `Bearer ${t.token}` },
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: METRICS_TOKEN },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${base}/metrics`, { headers });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
      expect(body.errors[0].extensions.code).toBe('INVALID_TOKEN');
    }
  });

  it('counts pages by operation and status, and ingested records by outcome', async () => {
    const before = await scrape();
    const pageLabels = { route: '/query', method: 'POST', operation: 'space', status: '200' };
    const pagesBefore = sample(before, 'loyalty_http_requests_total', pageLabels) ?? 0;
    const acceptedBefore =
      sample(before, 'loyalty_ingested_records_total', { outcome: 'accepted' }) ?? 0;

    const points = (key: string, address: string, amount: number) => ({
      type: 'points',
      key,
      spaceId: 1,
      address,
      points: amount,
      occurredAt: '2026-03-02T00:00:00Z',
    });
    const first = await ingest([points('k1', '0xA1', 5), points('k2', '0xB2', 9)]);
    expect(first.status).toBe(200);
    const second = await ingest([points('k1', '0xA1', 5), { type: 'points', key: 'bad' }]);
    expect(second.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await t.gql(PAGE)).status).toBe(200);
    const unauthenticated = await t.gql(PAGE, {}, { token: null });
    expect(unauthenticated.status).toBe(401);

    const after = await scrape();
    expect(sample(after, 'loyalty_http_requests_total', pageLabels)).toBe(pagesBefore + 3);
    expect(
      sample(after, 'loyalty_http_request_duration_seconds_count', {
        route: '/query',
        operation: 'space',
      }),
    ).toBeGreaterThanOrEqual(pagesBefore + 3);
    expect(
      sample(after, 'loyalty_http_requests_total', { route: '/ingest', status: '200' }),
    ).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'loyalty_http_requests_total', { route: '/query', status: '401' })).toBe(
      1,
    );
    expect(sample(after, 'loyalty_ingested_records_total', { outcome: 'accepted' })).toBe(
      acceptedBefore + 2,
    );
    expect(sample(after, 'loyalty_ingested_records_total', { outcome: 'duplicate' })).toBe(1);
    expect(sample(after, 'loyalty_ingested_records_total', { outcome: 'refused' })).toBe(1);
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('reports the rank index, the change feed and (MySQL) the connection pool', async () => {
    // The first page of a board starts its index loading; SQL answers meanwhile.
    expect((await t.gql(PAGE)).status).toBe(200);
    let text = '';
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
      text = await scrape();
      if ((sample(text, 'loyalty_rank_index_boards') ?? 0) >= 1) break;
    }
    expect(sample(text, 'loyalty_rank_index_boards')).toBe(1);
    expect(sample(text, 'loyalty_rank_index_entries')).toBe(2);
    expect(sample(text, 'loyalty_rank_index_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'loyalty_rank_index_max_entries')).toBe(5_000_000);
    expect(sample(text, 'loyalty_rank_index_load_seconds_count')).toBe(1);
    const lag = sample(text, 'loyalty_change_feed_lag_seconds');
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(5);
    if (kind !== 'sqlite') {
      expect(sample(text, 'loyalty_db_pool_connections', { state: 'limit' })).toBeGreaterThan(0);
      expect(sample(text, 'loyalty_db_pool_connections', { state: 'idle' })).toBeGreaterThan(0);
      expect(sample(text, 'loyalty_db_pool_waiting')).toBe(0);
      expect(sample(text, 'loyalty_sqlite_backlog_entries')).toBeUndefined();
    } else {
      expect(sample(text, 'loyalty_db_pool_connections', { state: 'limit' })).toBeUndefined();
      expect(sample(text, 'loyalty_sqlite_backlog_entries')).toBeGreaterThanOrEqual(0);
    }
  });

  it('labels a response-cache hit with its operation', async () => {
    const query = '{ spaceLoyaltyPointsRanks(spaceId: 1) { totalCount } }';
    const labels = { route: '/query', operation: 'spaceLoyaltyPointsRanks', status: '200' };
    const before = sample(await scrape(), 'loyalty_http_requests_total', labels) ?? 0;
    // Twice within RESPONSE_CACHE_MS: the second from the cache, with no GraphQL run.
    const pages = jest.spyOn(t.app.get(LeaderboardsService), 'getPageOfSpace');
    try {
      expect((await t.gql(query)).status).toBe(200);
      expect((await t.gql(query)).status).toBe(200);
      expect(pages).toHaveBeenCalledTimes(1);
    } finally {
      pages.mockRestore();
    }
    expect(sample(await scrape(), 'loyalty_http_requests_total', labels)).toBe(before + 2);
  });

  it('logs one JSON line per request: its id, route, status, duration, client and token id, never the token; each line has the version', async () => {
    logLines.length = 0;
    const response = await fetch(`${base}/ingest?x=secret-looking`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'access-token': ingestToken,
        'x-request-id': 'trace-me-1',
      },
      body: '[]',
    });
    expect(response.headers.get('x-request-id')).toBe('trace-me-1');
    await sleep(50);
    const lines = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const mine = lines.filter((line) => line.reqId === 'trace-me-1');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      method: 'POST',
      path: '/ingest',
      route: '/ingest',
      status: response.status,
      client: '127.0.0.1',
      tokenId: ingestTokenId,
      version: VERSION,
    });
    expect(typeof mine[0].ms).toBe('number');
    expect(typeof mine[0].time).toBe('string');
    const page = await t.gql(PAGE);
    await sleep(50);
    const pageLine = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.reqId === page.headers.get('x-request-id'));
    expect(pageLine).toMatchObject({ route: '/query', status: 200, operation: 'space' });
    // An invitation link's secret is a credential: its path is logged masked.
    const invitation = await fetch(`${base}/dashboard/invitations/inv1tati0nSecretValue`, {
      headers: { 'x-request-id': 'trace-me-2' },
      redirect: 'manual',
    });
    await sleep(50);
    const invitationLine = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.reqId === 'trace-me-2');
    expect(invitationLine).toMatchObject({
      path: '/dashboard/invitations/***',
      route: '/dashboard/invitations/:secret',
      status: invitation.status,
    });
    const all = logLines.join('\n');
    expect(all).not.toContain('inv1tati0nSecretValue');
    expect(all).not.toContain(ingestToken);
    expect(all).not.toContain(t.token);
    expect(all).not.toContain('secret-looking');
  });
});

describe('metrics on a port of their own', () => {
  it('serves GET /metrics there without a token, and nothing on the main port', async () => {
    const port = await freePort();
    const t = await startTestApp('sqlite', {
      METRICS_PORT: String(port),
      METRICS_HOST: '127.0.0.1',
      RATE_LIMIT_TOKEN: '2/1m',
    });
    try {
      expect(metricsPortOf(t.app)).toBe(port);
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await t.gql('{ a: quest(id: "1") { id } b: space(id: 1) { id } }')).status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(
        sample(text, 'loyalty_http_requests_total', { route: '/query', operation: 'multiple' }),
      ).toBe(2);
      expect(sample(text, 'loyalty_rate_limited_total', { route: '/query' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/query`)).status).toBe(404);
      const main = await fetch(t.url.replace(/\/query$/, '/metrics'), {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(main.status).toBe(404);
    } finally {
      await t.close();
    }
    // Closing the app closes its metrics listener.
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('refuses a METRICS_PORT equal to PORT, and a short METRICS_TOKEN', async () => {
    const { loadConfig } = await import('../../src/host/config/app-config');
    expect(() => loadConfig({ PORT: '4000', METRICS_PORT: '4000' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least/);
  });
});

describe('the service process at start', () => {
  it('says one JSON line at info: what listens where', async () => {
    const db = await createTestDatabase('sqlite');
    const child = spawn(process.execPath, [join(__dirname, '../../dist/src/host/main.js')], {
      env: { ...process.env, DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: '' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      for (const until = Date.now() + 30_000; !output.includes('Serving') && Date.now() < until;) {
        await sleep(100);
      }
      await sleep(300);
      const lines = output.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 'info', database: db.url, schemaProfile: 'extended' });
      expect(line.msg).toMatch(
        /^Serving POST http:\/\/localhost:\d+\/query \(database .*, schema profile extended\)$/,
      );
      expect(line.port).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      await db.drop();
    }
  });

  it('says nothing at LOG_LEVEL=warn, and refuses an unknown level', async () => {
    const db = await createTestDatabase('sqlite');
    const run = (level: string, port: number) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [join(__dirname, '../../dist/src/host/main.js')], {
          env: {
            ...process.env,
            DATABASE_URL: db.url,
            PORT: String(port),
            HOST: '127.0.0.1',
            LOG_LEVEL: level,
          },
        });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        // Stopped once it answers (it says nothing at warn, so its health is asked).
        const timer = setInterval(() => {
          void fetch(`http://127.0.0.1:${port}/health/live`).then(
            (answer) => answer.ok && child.kill('SIGTERM'),
            () => undefined,
          );
        }, 200);
        const giveUp = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('exit', (code) => {
          clearInterval(timer);
          clearTimeout(giveUp);
          resolve({ code, output });
        });
      });
    try {
      const quiet = await run('warn', await freePort());
      expect(quiet.output).toBe('');
      const wrong = await run('loud', await freePort());
      expect(wrong.code).toBe(2);
      expect(wrong.output).toMatch(/LOG_LEVEL must be one of fatal, error, warn, info, debug/);
    } finally {
      await db.drop();
    }
  });
});
