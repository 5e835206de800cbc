import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createConnection } from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { DatabaseHealth } from '../../src/host/health/database-health.service';
import { runCli } from '../utils/cli';
import { runSql } from '../utils/sql';
import { Client } from 'pg';
import { mariadbAlive, startMariadb, stopMariadb } from '../utils/mariadb-server';
import { postgresAlive, startPostgres, stopPostgres } from '../utils/postgres-server';
import { createTestDatabase, DB_KINDS, SERVER_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const PAGE =
  '{ space(id: 1) { loyaltyPointsRanks(first: 5) { totalCount list { rank points } } } }';
const SEED = [
  { type: 'space', id: 1, name: 'Ops' },
  ...Array.from({ length: 20 }, (_, i) => ({
    type: 'points',
    key: `o${i}`,
    spaceId: 1,
    address: `0x${i}`,
    points: 10 + i,
    occurredAt: '2026-01-01T00:00:00Z',
  })),
];

/**
 * A connection of our own to a test database, holding the boards' table locked as a slow
 * database would, and asking the server about the other connections to the database.
 */
interface LockHolder {
  lockBoards(): Promise<void>;
  unlock(): Promise<void>;
  /** Statements of this database waiting for a lock. */
  waitingForLocks(): Promise<number>;
  /** Connections to this database but this one. */
  otherConnections(): Promise<number>;
  /** The server's ids of those connections. */
  otherConnectionIds(): Promise<number[]>;
  end(): Promise<void>;
}

type ServerKind = 'mariadb' | 'postgres';

/** What the fault specs do to each kind of server, in its own words. */
const SERVERS: Record<
  ServerKind,
  {
    holder(url: string): Promise<LockHolder>;
    stop(): Promise<void>;
    start(): Promise<void>;
    alive(): Promise<boolean>;
    /** A statement that holds a pooled connection for 3 s. */
    sleep: string;
  }
> = {
  mariadb: {
    async holder(url) {
      const target = new URL(url);
      const connection = await createConnection({
        host: target.hostname,
        port: Number(target.port || 3306),
        user: target.username || 'root',
        database: target.pathname.slice(1),
      });
      const count = async (sql: string) => {
        const [rows] = await connection.query(sql);
        return Number((rows as Array<{ n: number }>)[0].n);
      };
      const others =
        'information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()';
      return {
        lockBoards: async () => void (await connection.query('LOCK TABLES board_entries WRITE')),
        unlock: async () => void (await connection.query('UNLOCK TABLES')),
        waitingForLocks: () =>
          count(
            "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND state LIKE '%lock%'",
          ),
        otherConnections: () => count(`SELECT COUNT(*) AS n FROM ${others}`),
        otherConnectionIds: async () => {
          const [rows] = await connection.query(`SELECT id FROM ${others}`);
          return (rows as Array<{ id: number }>).map((row) => Number(row.id));
        },
        end: () => connection.end(),
      };
    },
    stop: stopMariadb,
    start: startMariadb,
    alive: mariadbAlive,
    sleep: 'SELECT SLEEP(3)',
  },
  postgres: {
    async holder(url) {
      const client = new Client({ connectionString: url });
      await client.connect();
      const count = async (sql: string) => Number((await client.query(sql)).rows[0].n);
      const others =
        'pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';
      return {
        lockBoards: async () => {
          await client.query('BEGIN');
          await client.query('LOCK TABLE board_entries IN ACCESS EXCLUSIVE MODE');
        },
        unlock: async () => void (await client.query('COMMIT')),
        waitingForLocks: () =>
          count(
            "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          ),
        otherConnections: () => count(`SELECT COUNT(*) AS n FROM ${others}`),
        otherConnectionIds: async () =>
          (await client.query<{ pid: number }>(`SELECT pid FROM ${others}`)).rows.map((row) =>
            Number(row.pid),
          ),
        end: () => client.end(),
      };
    },
    stop: stopPostgres,
    start: startPostgres,
    alive: postgresAlive,
    // Past the pool's 3 s wait for a connection, so that the statements queued behind fail first.
    sleep: 'SELECT pg_sleep(3.5)',
  },
};

describe.each(DB_KINDS)('health endpoints on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.close());

  it('answers liveness and readiness without a token', async () => {
    const live = await fetch(t.url.replace('/query', '/health/live'));
    expect(live.status).toBe(200);
    // Which version answers: what an operator checks after a deploy.
    const { version } = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(await live.json()).toEqual({ status: 'ok', version });
    const ready = await fetch(t.url.replace('/query', '/health/ready'));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      version,
      checks: { database: 'up', shuttingDown: false, rateLimitStore: 'local' },
    });
  });

  // SQLite answers inside the process, before an overdue timer runs: only a server can be late.
  if (kind !== 'sqlite') {
    it('does not call the database down when this process, not the database, stalls', async () => {
      const health = t.app.get(DatabaseHealth);
      expect(await health.probe()).toBe(true);
      for (let round = 0; round < 3; round++) {
        const probing = health.probe();
        // Busy for longer than the probe's 1 s timeout, as in a long GC pause: the database's
        // answer arrives meanwhile, and is read only after the probe's timer is overdue.
        const until = Date.now() + 1_300;
        while (Date.now() < until);
        expect(await probing).toBe(true);
        expect(health.isUp()).toBe(true);
      }
      expect((await fetch(t.url.replace('/query', '/health/ready'))).status).toBe(200);
    });
  }
});

// The faults below need a server database: SQLite runs inside the process, cannot be stopped
// apart from it, and its queries cannot be held up by another connection's lock.
describe.each(SERVER_KINDS)('a slow database (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind, { REQUEST_TIMEOUT_MS: '1000' });
    await t.load(SEED);
  });
  afterAll(() => t?.close());

  it('cuts a request off at the deadline with a clear error, and gets its connection back', async () => {
    const holder = await SERVERS[kind].holder(t.db.url);
    try {
      await holder.lockBoards();
      const started = Date.now();
      const response = await t.gql(PAGE);
      const elapsed = Date.now() - started;
      expect(response.status).toBe(503);
      expect(response.body.errors[0]).toMatchObject({
        message: 'Request timed out after 1000 ms',
        extensions: { code: 'REQUEST_TIMEOUT', category: 'UNAVAILABLE', http_status: 503 },
      });
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(5_000);
      // The database gave up the statement too: nothing of ours still waits on the lock.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await holder.waitingForLocks()).toBe(0);
    } finally {
      await holder.unlock();
      await holder.end();
    }
    // More requests than the pool has connections: none was lost to the cut-off one.
    const after = await Promise.all(Array.from({ length: 15 }, () => t.gql(PAGE)));
    expect(after.map((r) => r.status)).toEqual(Array(15).fill(200));
  });

  it('keeps its pooled connections through statements the database refuses', async () => {
    const dataSource = t.app.get<DataSource>(getDataSourceToken());
    const holder = await SERVERS[kind].holder(t.db.url);
    try {
      await runSql(dataSource, 'SELECT 1 AS one');
      const before = await holder.otherConnectionIds();
      for (let i = 0; i < 20; i++)
        await expect(runSql(dataSource, 'SELECT n FROM no_such_table')).rejects.toThrow(
          /no_such_table/,
        );
      expect((await runSql(dataSource, 'SELECT 1 AS one'))[0].one).toBe(1);
      // A connection dropped after each refusal would show as new ids.
      const opened = (await holder.otherConnectionIds()).filter((id) => !before.includes(id));
      expect(opened).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});

describe.each(SERVER_KINDS)('shutting down (SIGTERM) on %s', (kind) => {
  it('stops taking work, finishes the request in flight, closes the pool and exits', async () => {
    const db = await createTestDatabase(kind);
    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      PORT: '0',
      RATE_LIMIT_TOKEN: 'off',
      RATE_LIMIT_ADDRESS: 'off',
    };
    const child = spawn(
      process.execPath,
      [join(__dirname, '..', '..', 'dist', 'src', 'host', 'main.js')],
      {
        env,
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const holder = await SERVERS[kind].holder(db.url);
    try {
      const until = Date.now() + 30_000;
      while (!/Serving POST http:\/\/localhost:(\d+)/.test(output) && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const port = /Serving POST http:\/\/localhost:(\d+)/.exec(output)?.[1];
      expect(port).toBeDefined();
      const url = `http://127.0.0.1:${port}/query`;
      const token = (
        await runCli(['token', 'create', '--name', 'ops'], { DATABASE_URL: db.url })
      ).stdout.trim();
      await runCli(['demo', '--entries', '50'], { DATABASE_URL: db.url });

      await holder.lockBoards();
      const inFlight = fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': token },
        body: JSON.stringify({ query: PAGE }),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      // No new work: the listener is closed.
      await expect(fetch(url.replace('/query', '/health/live'))).rejects.toThrow();
      await holder.unlock();
      const response = await inFlight;
      expect(response.status).toBe(200);
      const body = (await response.json()) as any;
      expect(body.data.space.loyaltyPointsRanks.list).toHaveLength(5);
      const { code, signal } = await exited;
      expect(code === 0 || signal === 'SIGTERM').toBe(true);
      expect(output).toContain('SIGTERM: finishing requests in flight, then closing');
      // The pool is closed: the server holds no connection to the database any more.
      expect(await holder.otherConnections()).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await holder.end();
      await db.drop();
    }
  });
});

describe.each(SERVER_KINDS)(
  'the database going away under load (%s stopped and started)',
  (kind) => {
    const server = SERVERS[kind];
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(kind, { REQUEST_TIMEOUT_MS: '3000' });
      await t.load(SEED);
    });
    afterAll(async () => {
      await server.start(); // whatever happened, leave the machine's database running
      await t?.close();
    });

    it('answers every request (503 while down, fast) and recovers by itself', async () => {
      type Answer = { phase: string; status: number; code?: string; ms: number; ok?: boolean };
      const answers: Answer[] = [];
      let phase = 'before';
      let running = true;
      const worker = async () => {
        // Bounded: at most ~50 requests a second per worker, and only while the phases last.
        while (running) {
          const started = Date.now();
          const response = await t.gql(PAGE);
          answers.push({
            phase,
            status: response.status,
            code: response.body.errors?.[0]?.extensions?.code,
            ms: Date.now() - started,
            ok: response.body.data?.space?.loyaltyPointsRanks?.totalCount === 20,
          });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const workers = Array.from({ length: 4 }, () => worker());
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      phase = 'down';
      await server.stop();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // A browser on a dashboard page gets a page saying so, naming no server; a script, the
      // envelope.
      const dashboard = (accept: string) =>
        fetch(t.url.replace('/query', '/dashboard/spaces'), {
          headers: { accept, cookie: 'lb_session=some-session-of-before' },
          redirect: 'manual',
        });
      const page = await dashboard('text/html,application/xhtml+xml');
      const pageText = await page.text();
      expect({
        status: page.status,
        type: page.headers.get('content-type'),
        retry: page.headers.get('retry-after'),
      }).toEqual({ status: 503, type: expect.stringMatching(/^text\/html/), retry: '1' });
      expect(pageText).toContain('The dashboard cannot reach its database right now.');
      expect(pageText).not.toMatch(/127\.0\.0\.1|3306|5432|ECONNREFUSED/);
      const script = await dashboard('application/json');
      expect(script.status).toBe(503);
      expect(
        ((await script.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]
          .extensions.code,
      ).toBe('SERVICE_UNAVAILABLE');
      phase = 'restarting';
      await server.start();
      const until = Date.now() + 30_000;
      while (Date.now() < until) {
        const ready = await fetch(t.url.replace('/query', '/health/ready'));
        if (ready.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      phase = 'after';
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      running = false;
      await Promise.all(workers);

      expect(await server.alive()).toBe(true);
      expect(
        answers.filter((a) => a.phase === 'before').every((a) => a.status === 200 && a.ok),
      ).toBe(true);
      const down = answers.filter((a) => a.phase === 'down');
      expect(down.length).toBeGreaterThan(10);
      for (const answer of answers.filter((a) => a.status !== 200)) {
        expect(answer.status).toBe(503);
        expect(['SERVICE_UNAVAILABLE', 'REQUEST_TIMEOUT']).toContain(answer.code);
      }
      // Failing fast: once the outage is known, a request is refused without waiting.
      const refused = down
        .filter((a) => a.status === 503)
        .map((a) => a.ms)
        .sort((a, b) => a - b);
      expect(refused.length).toBeGreaterThan(5);
      expect(refused[Math.floor(refused.length / 2)]).toBeLessThan(100);
      const after = answers.filter((a) => a.phase === 'after');
      expect(after.length).toBeGreaterThan(10);
      expect(after.every((a) => a.status === 200 && a.ok)).toBe(true);
    });
  },
);

describe.each(SERVER_KINDS)('every pooled connection busy (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
    await t.load(SEED);
  });
  afterAll(() => t?.close());

  it('stays ready: the probe does not queue behind slow requests for a pooled connection', async () => {
    const source = t.app.get<DataSource>(getDataSourceToken());
    // More slow statements than the pool has connections (10): the pool is full for 3 s, past a
    // whole probe and its 1 s timeout.
    const slow = Array.from({ length: 12 }, () =>
      source.query(SERVERS[kind].sleep).then(
        () => 'done',
        (error: Error) => error.message,
      ),
    );
    const statuses: number[] = [];
    const until = Date.now() + 2_800;
    while (Date.now() < until) {
      statuses.push((await fetch(t.url.replace('/query', '/health/ready'))).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // MySQL's pool queues the two left over until a connection frees up; node-postgres waits for
    // one as long as for a connection to open (3 s), then refuses (503 SERVICE_UNAVAILABLE for a
    // request: docs/operations.md, PostgreSQL).
    expect((await Promise.all(slow)).sort()).toEqual(
      kind === 'postgres'
        ? [...Array(10).fill('done'), ...Array(2).fill('timeout exceeded when trying to connect')]
        : Array(12).fill('done'),
    );
    expect(statuses.length).toBeGreaterThan(10);
    expect([...new Set(statuses)]).toEqual([200]);
    expect(t.app.get(DatabaseHealth).isUp()).toBe(true);
    // And a page is served again once the pool frees up.
    const page = await t.gql(PAGE);
    expect(page.body.data.space.loyaltyPointsRanks.totalCount).toBe(20);
  });
});
