import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { parseRecord, PointsRecord } from '../../src/records/ingest-record';
import { BoardTotalsStore } from '../../src/leaderboards/ledger/board-totals.store';
import { BoardReader } from '../../src/leaderboards/read/board-reader';
import { PointsLedgerService } from '../../src/leaderboards/ledger/points-ledger.service';
import { BoardChangeFeed } from '../../src/leaderboards/changes/board-change-feed';
import { RankIndexService } from '../../src/leaderboards/rank-index/rank-index.service';
import { seeded } from '../utils/board-model';
import { runCli } from '../utils/cli';
import { scratchPath } from '../utils/scratch-files';
import { DB_KINDS } from '../utils/test-databases';
import { GqlResponse, startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const ENTRIES = Number(process.env.RANK_INDEX_SPEC_ENTRIES ?? 100_000);
const ALL_TIME = { spaceId: 1, sprintId: 0 };
const SPRINT = { id: 7, spaceId: 1, name: 'Week', startTime: '2026-01-01T00:00:00Z' };
/** Entries agree across instances within this long after a write commits (the product's bound). */
const FRESHNESS_MS = 1000;

const PAGE = `query($after: String) { space(id: 1) { loyaltyPointsRanks(first: 1000, cursorAfter: $after) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { id } } } } }`;

interface Page {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  list: Array<{ rank: number; points: number; address: { id: string } }>;
}

const addressOf = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
/** Few distinct totals and times: ties on points and on time are common. */
const timeOf = (minute: number) => new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString();

describe.each(DB_KINDS)('rank indexes on %s', (kind) => {
  let a: TestApp;
  let b: TestApp;
  let keys = 0;
  const random = seeded(6);

  const pointsRecord = (address: string, points: number, minute: number) => ({
    type: 'points',
    key: `k${++keys}`,
    spaceId: 1,
    address,
    points,
    occurredAt: timeOf(minute),
  });

  /** The board as the database has it, in rank order (its rows, once folded: see BoardBacklog). */
  async function databaseBoard(board = ALL_TIME): Promise<Array<[string, number]>> {
    await a.app.get(BoardTotalsStore).settle(board);
    const rows: Array<Record<string, unknown>> = await runSql(
      a.app.get<DataSource>(getDataSourceToken()),
      `SELECT address_key AS addressKey, points FROM board_entries
         WHERE space_id = ? AND sprint_id = ? AND points > 0
         ORDER BY points DESC, reached_at ASC, address_key ASC`,
      [board.spaceId, board.sprintId],
    );
    return rows.map((row) => [String(row.addressKey), Number(row.points)]);
  }

  /** The whole board as one instance's reader answers it (its index once loaded). */
  async function readerBoard(t: TestApp, board = ALL_TIME): Promise<Array<[string, number]>> {
    const page = await t.app.get(BoardReader).readPage(board, { kind: 'first', size: 10_000_000 });
    // One expect, not one per entry: jest's expect costs tens of microseconds a call.
    expect(page.entries.findIndex((entry, i) => entry.rank !== i + 1)).toBe(-1);
    return page.entries.map((entry) => [entry.addressKey, entry.points]);
  }

  async function walk(t: TestApp): Promise<Page['list']> {
    const seen: Page['list'] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const response: GqlResponse<{ space: { loyaltyPointsRanks: Page } }> = await t.gql(PAGE, {
        after,
      });
      expect(response.body.errors).toBeUndefined();
      const page: Page = response.body.data.space.loyaltyPointsRanks;
      // Within a page, ranks are consecutive and points never increase, writes or not.
      const broken = page.list.findIndex(
        (entry, i) =>
          i > 0 &&
          (entry.rank !== page.list[i - 1].rank + 1 || entry.points > page.list[i - 1].points),
      );
      expect(broken).toBe(-1);
      seen.push(...page.list);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    return seen;
  }

  /**
   * Polls until `probe` answers true or `withinMs` has passed; answers the time it took, or null.
   * Cheap checks only: a failed toEqual on 100,000 entries would block the event loop for
   * seconds building its diff, and keep the instances from polling.
   */
  async function within(withinMs: number, probe: () => Promise<boolean>): Promise<number | null> {
    const started = Date.now();
    for (;;) {
      if (await probe()) return Date.now() - started;
      if (Date.now() - started > withinMs) return null;
      await sleep(20);
    }
  }

  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);

  /** Whether the instance's index of the board is loaded (loading it if not) with `entries`. */
  async function holds(t: TestApp, board: typeof ALL_TIME, entries: number): Promise<boolean> {
    const indexes = t.app.get(RankIndexService);
    await indexes.warm(board);
    return indexes
      .stats()
      .boards.some(
        (b) =>
          b.spaceId === board.spaceId && b.sprintId === board.sprintId && b.entries === entries,
      );
  }

  beforeAll(async () => {
    a = await startTestApp(kind);
    b = await startTestApp(kind, {}, a.db);
    await a.load([{ type: 'space', id: 1, name: 'Indexed' }]);
    for (let start = 0; start < ENTRIES; start += 10_000) {
      const records = [];
      for (let i = start; i < start + 10_000; i++) {
        records.push(pointsRecord(addressOf(i), 1 + Math.floor(random() * 500), i % 60));
      }
      await a.load(records);
    }
    for (const t of [a, b]) await t.app.get(RankIndexService).warm(ALL_TIME);
  }, 120_000);

  afterAll(async () => {
    await b?.app.close();
    await a?.close();
  });

  it('holds the whole board on both instances, in the database order', async () => {
    const truth = await databaseBoard();
    expect(truth).toHaveLength(ENTRIES);
    expect(await readerBoard(a)).toEqual(truth);
    expect(await readerBoard(b)).toEqual(truth);
    for (const t of [a, b]) {
      const stats = t.app.get(RankIndexService).stats();
      expect(stats.boards).toEqual([expect.objectContaining({ ...ALL_TIME, entries: ENTRIES })]);
      expect(stats.bytes / ENTRIES).toBeLessThan(64);
    }
  });

  it('answers pages, ranks and totalCount from the index without reading board_entries', async () => {
    // Pages trust an index only while its feed has polled in the last 800 ms.
    await a.app.get(BoardChangeFeed).catchUp();
    a.recorder.queries.length = 0;
    const response = await a.gql(
      `query($address: String!, $offset: String) { space(id: 1) {
        deep: loyaltyPointsRanks(first: 50, after: $offset) { totalCount list { rank } }
        addressLoyaltyPoints(address: $address) { rank points } } }`,
      { address: addressOf(123).toUpperCase(), offset: String(ENTRIES - 1001) },
    );
    expect(response.body.errors).toBeUndefined();
    const { deep, addressLoyaltyPoints } = response.body.data.space;
    expect(deep.totalCount).toBe(ENTRIES);
    expect(deep.list.map((e: { rank: number }) => e.rank)).toEqual(
      Array.from({ length: 50 }, (_, i) => ENTRIES - 999 + i),
    );
    const boardReads = a.recorder.queries.filter((q) => /board_entries|FROM boards/.test(q));
    expect(boardReads).toEqual([]);
    const truth = await databaseBoard();
    const at = truth.findIndex(([address]) => address === addressOf(123));
    expect(addressLoyaltyPoints).toEqual({ rank: at + 1, points: truth[at][1] });
  });

  it('walks the board while another process writes, and ends where the database is on both instances', async () => {
    // The writer is a separate process (import, 200 records per transaction), as another
    // instance would be; neither instance here writes.
    const lines: string[] = [];
    for (let i = 0; i < 40_000; i++) {
      const address = addressOf(Math.floor(random() * (ENTRIES + 2000)));
      // Mostly gains, some deductions large enough to take an entry off the board.
      const points = random() < 0.15 ? -Math.floor(random() * 600) : 1 + Math.floor(random() * 300);
      lines.push(JSON.stringify(pointsRecord(address, points, 60 + Math.floor(random() * 30))));
    }
    const file = scratchPath('rank-index-', 'writes.ndjson');
    writeFileSync(file, lines.join('\n'));
    const feed = b.app.get(BoardChangeFeed);
    const importing = runCli(['import', file, '--batch-size', '200'], { DATABASE_URL: a.db.url });
    const before = feed.version;
    await within(10 * FRESHNESS_MS, () => Promise.resolve(feed.version > before));
    const versionAtStart = feed.version;
    const walked = await walk(b);
    const versionAtEnd = feed.version;
    const result = await importing;
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).toMatch(/: 40000 accepted, 0 duplicates, 0 refused/);
    // Changes kept arriving while the walk went on.
    expect(versionAtEnd).toBeGreaterThan(versionAtStart);
    expect(walked.length).toBeGreaterThan(ENTRIES * 0.5);
    const truth = await databaseBoard();
    expect(truth.length).not.toBe(ENTRIES);
    // Comparing 100,000 entries takes a while itself: the freshness bound is the next spec's.
    for (const t of [a, b]) {
      await within(5 * FRESHNESS_MS, async () => same(await readerBoard(t), truth));
      expect(await readerBoard(t)).toEqual(truth);
    }
    const settled = await walk(b);
    expect(settled.map((e) => [e.address.id, e.points])).toEqual(truth);
    expect(settled.map((e) => e.rank)).toEqual(truth.map((_, i) => i + 1));
  }, 180_000);

  it('shows a write on one instance in the ranks of the other within a second', async () => {
    for (let round = 1; round <= 3; round++) {
      const top = (await databaseBoard())[0][1];
      const address = addressOf(ENTRIES + 10_000 + round);
      await a.load([pointsRecord(address, top + 1000, 100)]);
      const written = Date.now();
      const expected = { rank: 1, points: top + 1000, address: { id: address } };
      const firstOnB = async () =>
        (await b.gql(PAGE, { after: null })).body.data.space.loyaltyPointsRanks.list[0];
      const waited = await within(FRESHNESS_MS - (Date.now() - written), async () =>
        same(await firstOnB(), expected),
      );
      expect(await firstOnB()).toEqual(expected);
      expect(waited).not.toBeNull();
      expect(waited).toBeLessThan(FRESHNESS_MS);
    }
  });

  it('reloads a sprint board that was rebuilt on the other instance', async () => {
    const sprint = { spaceId: 1, sprintId: SPRINT.id };
    await a.load([{ type: 'sprint', ...SPRINT, endTime: '2026-01-01T00:30:00Z' }]);
    await b.app.get(RankIndexService).warm(sprint);
    expect(await readerBoard(b, sprint)).toEqual(await databaseBoard(sprint));
    // The window moves: the board is rebuilt from the ledger in one statement.
    await a.load([{ type: 'sprint', ...SPRINT, endTime: '2026-01-01T01:00:00Z' }]);
    const truth = await databaseBoard(sprint);
    expect(
      await within(FRESHNESS_MS, async () => same(await readerBoard(b, sprint), truth)),
    ).not.toBeNull();
    expect(await within(5 * FRESHNESS_MS, () => holds(b, sprint, truth.length))).not.toBeNull();
    expect(await readerBoard(b, sprint)).toEqual(truth);
  });

  if (kind !== 'sqlite') {
    it('picks up a transaction that commits after a later one (a gap in the change sequence)', async () => {
      const parsed = (record: Record<string, unknown>) => {
        const result = parseRecord(record);
        if (!result.ok) throw new Error(result.reason);
        return result.record as PointsRecord;
      };
      const board = await databaseBoard();
      // Two boards, so that the two transactions share no lock (writers of one board hold its
      // row in boards from their rank buckets to their commit): the early write goes to a second
      // space's board, which instance B holds in its index too.
      const OTHER = { spaceId: 2, sprintId: 0 };
      const [early, late] = [board[10][0], board[20][0]];
      await a.load([
        { type: 'space', id: 2, name: 'Other' },
        { ...pointsRecord(early, 100, 119), spaceId: 2 },
      ]);
      await b.app.get(RankIndexService).warm(OTHER);
      expect(await holds(b, OTHER, 1)).toBe(true);
      expect(await readerBoard(b, OTHER)).toEqual([[early, 100]]);
      const runner = a.app.get<DataSource>(getDataSourceToken()).createQueryRunner();
      await runner.startTransaction();
      try {
        await a.app
          .get(PointsLedgerService)
          .ingestPoints(
            runner.manager,
            [parsed({ ...pointsRecord(early, 5000, 120), spaceId: 2 })],
            'optimistic',
          );
        await a.load([pointsRecord(late, 7000, 121)]);
        const lateOnB = async () =>
          (await b.app.get(BoardReader).findEntry(ALL_TIME, late))?.points;
        await within(FRESHNESS_MS, async () => (await lateOnB()) === board[20][1] + 7000);
        expect(await lateOnB()).toBe(board[20][1] + 7000);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
      const earlyOnB = async () => (await b.app.get(BoardReader).findEntry(OTHER, early))?.points;
      await within(FRESHNESS_MS, async () => (await earlyOnB()) === 5100);
      expect(await earlyOnB()).toBe(5100);
      expect(await readerBoard(b, OTHER)).toEqual(await databaseBoard(OTHER));
      expect(await readerBoard(b)).toEqual(await databaseBoard());
    });
  }

  it('announces a batch that rewrites much of a board as a reset, and both instances reload it', async () => {
    const dataSource = a.app.get<DataSource>(getDataSourceToken());
    const [{ highest }]: Array<{ highest: number | string }> = await runSql(
      dataSource,
      'SELECT MAX(seq) AS highest FROM board_changes',
    );
    const records = [];
    for (let i = 0; i < Math.max(2000, ENTRIES / 4); i++) {
      records.push(pointsRecord(addressOf(i), 1 + Math.floor(random() * 50), 130));
    }
    await a.load(records);
    const announced: Array<{ addressKey: string | null }> = await runSql(
      dataSource,
      'SELECT address_key AS addressKey FROM board_changes WHERE seq > ?',
      [highest],
    );
    expect(announced).toEqual([{ addressKey: null }]);
    const truth = await databaseBoard();
    for (const t of [a, b]) {
      // Answers are right at once (from SQL until the board is reloaded); the reload follows.
      await within(5 * FRESHNESS_MS, async () => same(await readerBoard(t), truth));
      expect(await readerBoard(t)).toEqual(truth);
      expect(await within(5 * FRESHNESS_MS, () => holds(t, ALL_TIME, truth.length))).not.toBeNull();
      expect(await readerBoard(t)).toEqual(truth);
    }
  });

  it('notices a change sequence that went back (a restore) and reloads', async () => {
    const dataSource = a.app.get<DataSource>(getDataSourceToken());
    // What a restore of an older backup, or a failover to a replica that lags, looks like. (A
    // backup holds its change log with its boards; this one is cut by hand, so SQLite's boards
    // are folded first: see BoardBacklog.)
    await a.app.get(BoardTotalsStore).settleAll();
    if (kind === 'sqlite') {
      await runSql(dataSource, 'DELETE FROM board_changes');
      await runSql(dataSource, "DELETE FROM sqlite_sequence WHERE name = 'board_changes'");
    } else {
      await runSql(dataSource, 'TRUNCATE TABLE board_changes');
    }
    const address = addressOf(ENTRIES + 20_000);
    const top = (await databaseBoard())[0][1];
    await a.load([pointsRecord(address, top + 1, 140)]);
    const truth = await databaseBoard();
    expect(truth[0]).toEqual([address, top + 1]);
    // Within SEQUENCE_CHECK_EVERY polls (5 s) each instance drops its indexes and reloads: a
    // cheap check while waiting (comparing whole boards would keep the polls from running).
    for (const t of [a, b]) {
      const indexes = t.app.get(RankIndexService);
      const reloaded = await within(20 * FRESHNESS_MS, () =>
        Promise.resolve(indexes.indexFor(ALL_TIME)?.get(address)?.rank === 1),
      );
      expect(reloaded).not.toBeNull();
      expect(await readerBoard(t)).toEqual(truth);
    }
  });

  it('serves a board larger than the memory budget from SQL, correctly', async () => {
    const small = await startTestApp(kind, { RANK_INDEX_MAX_ENTRIES: '1000' }, a.db);
    try {
      await small.app.get(RankIndexService).warm(ALL_TIME);
      expect(small.app.get(RankIndexService).stats().boards).toEqual([]);
      expect(await readerBoard(small)).toEqual(await databaseBoard());
    } finally {
      await small.app.close();
    }
  });
});
