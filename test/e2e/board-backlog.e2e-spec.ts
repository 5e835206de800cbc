import Database from 'better-sqlite3';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { bruteForceBoard, ExpectedEntry, PointsFixture, seeded } from '../utils/board-model';
import { runCli } from '../utils/cli';
import { createTestDatabase, DB_KINDS, DbKind, TestDatabase } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

/*
 * SQLite leaves the board changes of ingest-sized writes in the change log and folds them into
 * board_entries later (BoardBacklog). Whatever state a writer leaves them in, what a client reads
 * is every accepted record, summed: after the writer is killed, from SQL pages, from a rank index
 * loaded later, and once further writes add to totals that were never folded. MySQL/MariaDB write
 * board_entries at once: the same specs hold there with nothing left unfolded.
 */

const MAIN = join(__dirname, '..', '..', 'dist', 'src', 'host', 'main.js');
const SPACE = { type: 'space', id: 1, name: 'Backlog' };
const SPRINT = {
  type: 'sprint',
  id: 21,
  spaceId: 1,
  name: 'First week',
  startTime: '2026-05-01T00:00:00Z',
  endTime: '2026-05-08T00:00:00Z',
};
const WINDOW = { start: SPRINT.startTime, end: SPRINT.endTime };

const BOARD = `query($s: Int, $after: String) { space(id: 1) { loyaltyPointsRanks(sprintId: $s, first: 200, cursorAfter: $after) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { id } } } } }`;

/** Random records over `addresses` addresses and two weeks, half of them in the sprint. */
function records(prefix: string, count: number, addresses: number, seed: number): PointsFixture[] {
  const random = seeded(seed);
  return Array.from({ length: count }, (_, i) => ({
    key: `${prefix}-${i}`,
    spaceId: 1,
    address: `0xB${Math.floor(random() * addresses).toString(16)}`,
    points: random() < 0.1 ? -Math.floor(random() * 20) - 1 : Math.floor(random() * 50) + 1,
    occurredAt: new Date(
      Date.parse('2026-05-01T00:00:00Z') + Math.floor(random() * 14 * 86_400) * 1000,
    ).toISOString(),
  }));
}

/** Which boards have changes board_entries lacks, read from outside the service. */
async function unfoldedBoards(db: TestDatabase): Promise<number[]> {
  const sql = 'SELECT sprint_id AS sprintId FROM boards WHERE unfolded_since IS NOT NULL';
  if (db.kind === 'sqlite') {
    const file = new Database(db.url.slice('sqlite:'.length), { readonly: true });
    try {
      return (file.prepare(sql).all() as Array<{ sprintId: number }>).map((r) => r.sprintId);
    } finally {
      file.close();
    }
  }
  if (db.kind === 'postgres') {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(sql.replace('AS sprintId', 'AS "sprintId"'));
      return (rows as Array<{ sprintId: number }>).map((r) => r.sprintId);
    } finally {
      await client.end();
    }
  }
  const connection = await createConnection(db.url);
  try {
    const [rows] = await connection.query(sql);
    return (rows as Array<{ sprintId: number }>).map((r) => r.sprintId);
  } finally {
    await connection.end();
  }
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** The service as an operator runs it, in a process of its own. */
async function startServer(db: TestDatabase): Promise<{
  child: ChildProcess;
  ingest: (batch: Array<Record<string, unknown>>) => Promise<void>;
}> {
  const port = await freePort();
  const env = { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1' };
  const token = await runCli(['token', 'create', '--name', 'feed', '--scope', 'ingest'], env);
  expect(token.code).toBe(0);
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, RATE_LIMIT_INGEST: 'off' },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 300) throw new Error('the server did not start');
    await sleep(50);
  }
  const ingest = async (batch: Array<Record<string, unknown>>) => {
    const response = await fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token.stdout.trim() },
      body: JSON.stringify(batch),
    });
    const answer = (await response.json()) as { accepted: number; refused: number };
    expect([response.status, answer.refused]).toEqual([200, 0]);
  };
  await ingest([SPACE, SPRINT]);
  return { child, ingest };
}

describe.each(DB_KINDS)('board changes not yet in board_entries, on %s', (kind: DbKind) => {
  let db: TestDatabase;
  let t: TestApp | undefined;
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  /** A board through /query, page by page, as rank, address and points. */
  async function walk(app: TestApp, sprintId?: number): Promise<ExpectedEntry[]> {
    const rows: ExpectedEntry[] = [];
    let after: string | null = null;
    for (;;) {
      const response = await app.gql(BOARD, { s: sprintId ?? null, after });
      expect(response.body.errors).toBeUndefined();
      const board: any = response.body.data.space.loyaltyPointsRanks;
      for (const entry of board.list)
        rows.push({ rank: entry.rank, addressKey: entry.address.id, points: entry.points });
      if (!board.pageInfo.hasNextPage) {
        expect(board.totalCount).toBe(rows.length);
        return rows;
      }
      after = board.pageInfo.endCursor;
    }
  }

  it('are on every board after their writer is killed, in SQL pages, and later writes add to them', async () => {
    db = await createTestDatabase(kind);
    expect((await runCli(['migrate'], { DATABASE_URL: db.url })).code).toBe(0);
    const { child, ingest } = await startServer(db);
    const first = records('before-kill', 6000, 900, kind === 'sqlite' ? 31 : 32);
    try {
      // Two clients at once, 500 records a request, as a feed sends them.
      const batches = Array.from({ length: 12 }, (_, i) =>
        first.slice(i * 500, (i + 1) * 500).map((e) => ({ type: 'points', ...e })),
      );
      await Promise.all(
        [0, 1].map(async (client) => {
          for (let i = client; i < batches.length; i += 2) await ingest(batches[i]);
        }),
      );
    } finally {
      // At once: the server folds only after a second without writes.
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    // What the kill left: on SQLite, changes of both boards that board_entries lacks.
    expect((await unfoldedBoards(db)).sort()).toEqual(kind === 'sqlite' ? [0, 21] : []);

    // Another instance, whose pages all come from SQL.
    t = await startTestApp(kind, { RANK_INDEX_MAX_ENTRIES: '0' }, db);
    expect(await walk(t)).toEqual(bruteForceBoard(first, 1));
    expect(await walk(t, 21)).toEqual(bruteForceBoard(first, 1, WINDOW));
    expect(await unfoldedBoards(db)).toEqual([]);

    // Its own writes, read at once (a fold before each board's SQL read)...
    const second = records('after-kill', 3000, 1200, kind === 'sqlite' ? 33 : 34);
    for (let i = 0; i < second.length; i += 500)
      await t.load(second.slice(i, i + 500).map((e) => ({ type: 'points', ...e })));
    if (kind === 'sqlite') expect((await unfoldedBoards(db)).sort()).toEqual([0, 21]);
    const all = [...first, ...second];
    expect(await walk(t, 21)).toEqual(bruteForceBoard(all, 1, WINDOW));
    // ...and folded by the idle writer with nobody reading (one board a second).
    for (let waited = 0; (await unfoldedBoards(db)).length > 0; waited += 100) {
      if (waited > 10_000) throw new Error('the idle writer did not fold its boards');
      await sleep(100);
    }
    expect(await walk(t)).toEqual(bruteForceBoard(all, 1));
  }, 120_000);
});
