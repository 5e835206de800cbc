import type { DataSource, EntityManager } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { bruteForceBoard, ExpectedEntry, PointsFixture, seeded } from '../utils/board-model';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { SqlBoardReader } from '../../src/leaderboards/read/sql-board-reader';
import { BoardTotalsStore } from '../../src/leaderboards/ledger/board-totals.store';
import { DirectBoardTotalsStore } from '../../src/leaderboards/ledger/direct-board-totals.store';
import { RANK_BUCKETS } from '../../src/leaderboards/rank-buckets/rank-buckets';
import { compareRankKeys, RankKey, BoardRef } from '../../src/leaderboards/ranking/ranking';
import { TransactionRunner } from '../../src/storage/transactions/transaction-runner';
import { num } from '../../src/storage/dialect/sql-dialect';
import { ReadReplicas } from '../../src/storage/replica/read-replicas';
import type { BoardSql } from '../../src/leaderboards/read/board-sql';
import { runSql } from '../utils/sql';

const HOUR = 3_600_000;
const EPOCH = Date.parse('2026-06-01T00:00:00Z');
const iso = (millis: number) => new Date(millis).toISOString();
const ALL_TIME: BoardRef = { spaceId: 1, sprintId: 0 };
const SPRINT = {
  id: 11,
  spaceId: 1,
  name: 'June',
  startTime: iso(EPOCH + 24 * HOUR),
  endTime: iso(EPOCH + 72 * HOUR),
};
const LATE_SPRINT = {
  id: 12,
  spaceId: 1,
  name: 'Late',
  startTime: iso(EPOCH + 12 * HOUR),
  endTime: iso(EPOCH + 60 * HOUR),
};
const windowOf = (s: typeof SPRINT) => ({ start: s.startTime, end: s.endTime });

/** Small buckets, so that a board of a few hundred entries splits many times. */
const BUCKET_SIZE = 4;

const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

/*
 * Boards read from SQL (rank indexes off) rank through board_rank_buckets: after randomised writes
 * (ties of points and times, entries moving up and down across buckets, falling to 0 or below and
 * coming back, a sprint board built from the ledger), every bucket counts exactly the entries in
 * its range, and every rank, offset page and cursor page equals the brute-force ranking.
 */
describe.each(DB_KINDS)('rank buckets on %s', (kind) => {
  let t: TestApp;
  let dataSource: DataSource;
  let reader: SqlBoardReader;
  const events: PointsFixture[] = [];
  const rand = seeded(25);
  let next = 0;
  const savedSize = RANK_BUCKETS.size;

  beforeAll(async () => {
    RANK_BUCKETS.size = BUCKET_SIZE;
    t = await startTestApp(kind, { RANK_INDEX_MAX_ENTRIES: '0' });
    dataSource = t.app.get<DataSource>(getDataSourceToken());
    reader = t.app.get(SqlBoardReader, { strict: false });
    await t.load([
      { type: 'space', id: 1, name: 'Buckets' },
      { type: 'sprint', ...SPRINT },
    ]);
  });
  afterAll(async () => {
    await tidied();
    await t?.close();
    RANK_BUCKETS.size = savedSize;
  });

  /** Other instances on the same database, whose splits are waited for too. */
  const others: TestApp[] = [];

  /** Waits for MySQL's splits after commit; SQLite splits in the writer's transaction. */
  async function tidied(): Promise<void> {
    for (const instance of [t, ...others]) {
      const store = instance?.app.get(BoardTotalsStore);
      if (store instanceof DirectBoardTotalsStore) await store.bucketsTidied();
    }
  }

  /** A batch of random events: points in steps of 5 (some negative), times on whole hours. */
  function randomEvents(count: number, addresses: number): PointsFixture[] {
    return Array.from({ length: count }, () => ({
      key: `e-${next++}`,
      spaceId: 1,
      address: address(Math.floor(rand() * addresses)),
      points: 5 * (Math.floor(rand() * 9) - 2),
      occurredAt: iso(EPOCH + Math.floor(rand() * 96) * HOUR),
    }));
  }

  /** Random events of another space, over `addresses` addresses. */
  function eventsOf(spaceId: number, count: number, addresses: number): PointsFixture[] {
    return randomEvents(count, addresses).map((e) => ({ ...e, spaceId }));
  }

  async function write(batch: PointsFixture[], through: TestApp = t) {
    const outcomes = await through.load(batch.map((e) => ({ type: 'points', ...e })));
    expect(outcomes.every((o) => o.status === 'accepted')).toBe(true);
    events.push(...batch);
  }

  async function buckets(
    board: BoardRef,
    source: DataSource | EntityManager = dataSource,
  ): Promise<Array<RankKey & { count: number }>> {
    const rows: Array<Record<string, unknown>> = await runSql(
      source,
      `SELECT points, reached_at AS reachedAt, address_key AS addressKey, entry_count AS n
       FROM board_rank_buckets WHERE space_id = ? AND sprint_id = ?`,
      [board.spaceId, board.sprintId],
    );
    return rows
      .map((row) => ({
        points: num(row.points),
        reachedAt: num(row.reachedAt),
        addressKey: String(row.addressKey),
        count: num(row.n),
      }))
      .sort(compareRankKeys);
  }

  /** Every bucket's count is the number of the board's entries from its bound to the next one. */
  async function expectExactBuckets(board: BoardRef): Promise<number> {
    await t.app.get(BoardTotalsStore).settle(board);
    await tidied();
    const list = await buckets(board);
    const rows: Array<Record<string, unknown>> = await runSql(
      dataSource,
      `SELECT address_key AS addressKey, points, reached_at AS reachedAt FROM board_entries
       WHERE space_id = ? AND sprint_id = ? AND points > 0`,
      [board.spaceId, board.sprintId],
    );
    const counted = list.map(() => 0);
    for (const row of rows) {
      const key = {
        addressKey: String(row.addressKey),
        points: num(row.points),
        reachedAt: num(row.reachedAt),
      };
      let at = -1;
      for (let i = 0; i < list.length && compareRankKeys(list[i], key) <= 0; i++) at = i;
      expect(at).toBeGreaterThanOrEqual(0);
      counted[at]++;
    }
    expect(list.map((b) => b.count)).toEqual(counted);
    // Readers sum from the bottom with the board's counter: it counts the same entries.
    const [counter] = await runSql(
      dataSource,
      'SELECT entry_count AS n FROM boards WHERE space_id = ? AND sprint_id = ?',
      [board.spaceId, board.sprintId],
    );
    expect(num(counter.n)).toBe(rows.length);
    // Splits and drops happened: no bucket past twice the size, none empty but the head.
    for (const [i, bucket] of list.entries()) {
      expect(bucket.count).toBeLessThanOrEqual(2 * BUCKET_SIZE);
      if (i > 0) expect(bucket.count).toBeGreaterThan(0);
    }
    return list.length;
  }

  /** Ranks, offset pages and cursor pages from SQL against the brute-force board. */
  async function expectRanks(board: BoardRef, expected: ExpectedEntry[]) {
    for (const entry of expected) {
      const found = await reader.findEntry(board, entry.addressKey);
      expect({ address: entry.addressKey, rank: found?.rank, points: found?.points }).toEqual({
        address: entry.addressKey,
        rank: entry.rank,
        points: entry.points,
      });
    }
    const size = 7;
    for (let skip = 0; skip <= expected.length + 1; skip += 3) {
      const page = await reader.readPage(board, {
        kind: skip === 0 ? 'first' : 'offset',
        skip,
        size,
      } as never);
      expect(page.entries.map((e) => [e.rank, e.addressKey])).toEqual(
        expected.slice(skip, skip + size).map((e) => [e.rank, e.addressKey]),
      );
      expect(page.totalCount).toBe(expected.length);
      expect(page.hasNextPage).toBe(skip + size < expected.length);
      if (page.entries.length === 0) continue;
      // The cursor page after this page's last entry, and the page before its first.
      const last = page.entries[page.entries.length - 1];
      const after = await reader.readPage(board, { kind: 'after', key: last, size } as never);
      expect(after.entries.map((e) => [e.rank, e.addressKey])).toEqual(
        expected
          .slice(skip + page.entries.length, skip + page.entries.length + size)
          .map((e) => [e.rank, e.addressKey]),
      );
      const before = await reader.readPage(board, {
        kind: 'before',
        key: page.entries[0],
        size,
      } as never);
      expect(before.entries.map((e) => [e.rank, e.addressKey])).toEqual(
        expected.slice(Math.max(0, skip - size), skip).map((e) => [e.rank, e.addressKey]),
      );
    }
  }

  it('count and rank exactly after random writes, on the all-time board and a sprint', async () => {
    for (let round = 0; round < 8; round++) {
      await write(randomEvents(90, 160));
      if (round % 2 === 1) {
        expect(await expectExactBuckets(ALL_TIME)).toBeGreaterThan(5);
        await expectExactBuckets({ spaceId: 1, sprintId: SPRINT.id });
      }
    }
    const expected = bruteForceBoard(events, 1);
    expect(expected.length).toBeGreaterThan(60);
    // Ties: entries sharing points, and sharing points and time.
    expect(new Set(expected.map((e) => e.points)).size).toBeLessThan(expected.length / 2);
    await expectRanks(ALL_TIME, expected);
    await expectRanks(
      { spaceId: 1, sprintId: SPRINT.id },
      bruteForceBoard(events, 1, windowOf(SPRINT)),
    );
  });

  it('read a bucketed board through its buckets, never counting from the top', async () => {
    const expected = bruteForceBoard(events, 1);
    const reads = (reader as unknown as { reads: ReadReplicas }).reads;
    const fallbacks = (reader as unknown as { sql: BoardSql }).sql;
    const query = jest.spyOn(reads, 'query');
    try {
      const deep = expected[expected.length - 3];
      expect((await reader.findEntry(ALL_TIME, deep.addressKey))?.rank).toBe(deep.rank);
      const skip = Math.floor(expected.length / 2);
      const page = await reader.readPage(ALL_TIME, { kind: 'offset', skip, size: 5 } as never);
      expect(page.entries[0].rank).toBe(skip + 1);
      const texts = query.mock.calls.map(([sql]) => sql);
      expect(texts.length).toBeGreaterThan(0);
      expect(texts).not.toContain(fallbacks.countAhead);
      expect(texts).not.toContain(fallbacks.offsetPage);
    } finally {
      query.mockRestore();
    }
  });

  it('follow entries falling to 0 points and below, off the board, and back', async () => {
    const board = bruteForceBoard(events, 1);
    const fallers = board.filter((_, i) => i % 5 === 0);
    await write(
      fallers.map((e) => ({
        key: `fall-${next++}`,
        spaceId: 1,
        address: e.addressKey,
        points: -e.points - (e.rank % 2) * 5,
        occurredAt: iso(EPOCH + 30 * HOUR),
      })),
    );
    await expectExactBuckets(ALL_TIME);
    const fallen = bruteForceBoard(events, 1);
    expect(fallen.length).toBe(board.length - fallers.length);
    await expectRanks(ALL_TIME, fallen);
    await write(randomEvents(120, 200));
    await expectExactBuckets(ALL_TIME);
    await expectRanks(ALL_TIME, bruteForceBoard(events, 1));
  });

  it("build a sprint board's buckets when the board is rebuilt from the ledger", async () => {
    await t.load([{ type: 'sprint', ...LATE_SPRINT }]);
    const board = { spaceId: 1, sprintId: LATE_SPRINT.id };
    expect(await expectExactBuckets(board)).toBeGreaterThan(3);
    await expectRanks(board, bruteForceBoard(events, 1, windowOf(LATE_SPRINT)));
    // Its window moves: rebuilt again, and written on afterwards.
    const moved = { ...LATE_SPRINT, startTime: iso(EPOCH + 30 * HOUR) };
    await t.load([{ type: 'sprint', ...moved }]);
    await write(randomEvents(60, 200));
    await expectExactBuckets(board);
    await expectRanks(board, bruteForceBoard(events, 1, windowOf(moved)));
  });

  it("leave a board under four buckets' worth without buckets, and make them once it is larger", async () => {
    await t.load([{ type: 'space', id: 2, name: 'Small' }]);
    const board = { spaceId: 2, sprintId: 0 };
    // Fewer addresses than RANK_BUCKETS.fromEntries (4 buckets of BUCKET_SIZE): no buckets yet.
    await write(eventsOf(2, 40, 4 * BUCKET_SIZE - 2));
    await t.app.get(BoardTotalsStore).settle(board);
    await tidied();
    expect(await buckets(board)).toEqual([]);
    await expectRanks(board, bruteForceBoard(events, 2));
    await write(eventsOf(2, 90, 120));
    expect(await expectExactBuckets(board)).toBeGreaterThan(3);
    await expectRanks(board, bruteForceBoard(events, 2));
  });

  it('give a board filled without buckets its buckets with its next write', async () => {
    await t.load([{ type: 'space', id: 3, name: 'Filled' }]);
    const board = { spaceId: 3, sprintId: 0 };
    await write(eventsOf(3, 120, 80));
    await t.app.get(BoardTotalsStore).settle(board);
    await tidied();
    // As a deployment upgraded to buckets finds its boards: entries and counter, no buckets.
    await runSql(dataSource, 'DELETE FROM board_rank_buckets WHERE space_id = 3');
    await runSql(
      dataSource,
      'UPDATE boards SET bucket_layout = bucket_layout + 1 WHERE space_id = 3',
    );
    const onBoard = bruteForceBoard(events, 3);
    const [{ n: bucketsLeft }] = await runSql(
      dataSource,
      'SELECT COUNT(*) AS n FROM board_rank_buckets WHERE space_id = 3',
    );
    expect(num(bucketsLeft)).toBe(0);
    // Points for entries already on the board move them but add none: the buckets are made all
    // the same (on MySQL by the tidier, which holds the board's row exclusively).
    const movers = onBoard.slice(0, 10).map((e, i) => ({
      key: `move-${next++}`,
      spaceId: 3,
      address: e.addressKey,
      points: 5 * (i % 3) + 5,
      occurredAt: iso(EPOCH + 50 * HOUR),
    }));
    await write(movers);
    expect(await expectExactBuckets(board)).toBeGreaterThan(3);
    await expectRanks(board, bruteForceBoard(events, 3));
    await write([
      {
        key: `new-${next++}`,
        spaceId: 3,
        address: address(999),
        points: 35,
        occurredAt: iso(EPOCH),
      },
    ]);
    expect(await expectExactBuckets(board)).toBeGreaterThan(3);
    await expectRanks(board, bruteForceBoard(events, 3));
  });

  it('count exactly when two instances write one board, at once and by turns', async () => {
    await t.load([{ type: 'space', id: 4, name: 'Shared' }]);
    const board = { spaceId: 4, sprintId: 0 };
    const second = await startTestApp(kind, { RANK_INDEX_MAX_ENTRIES: '0' }, t.db);
    others.push(second);
    try {
      for (let round = 0; round < 4; round++) {
        await Promise.all([
          write(eventsOf(4, 60, 150)),
          write(eventsOf(4, 60, 150), second),
          write(eventsOf(4, 60, 150)),
        ]);
      }
      expect(await expectExactBuckets(board)).toBeGreaterThan(5);
      // By turns: the second instance splits buckets the first knows, then the first moves
      // entries across the new bounds with what it kept (it must see the layout changed).
      await write(eventsOf(4, 50, 150));
      await write(eventsOf(4, 200, 260), second);
      await tidied();
      await write(eventsOf(4, 80, 260));
      await expectExactBuckets(board);
      await expectRanks(board, bruteForceBoard(events, 4));
    } finally {
      others.splice(others.indexOf(second), 1);
      await second.close();
    }
  });

  it("rank from the top when the board's counter may count changes its entries lack", async () => {
    await t.app.get(BoardTotalsStore).settle(ALL_TIME);
    await tidied();
    const expected = bruteForceBoard(events, 1);
    // As SQLite marks a board whose entries have changes still to fold in: readers cannot take
    // the counter less the buckets after a bound, and sum those before it instead.
    await runSql(
      dataSource,
      'UPDATE boards SET unfolded_since = 1, entry_count = entry_count + 7 WHERE space_id = 1 AND sprint_id = 0',
    );
    // Reads between another writer's commit and the fold: nothing settles the board first.
    const settle = jest.spyOn(t.app.get(BoardTotalsStore), 'settle').mockResolvedValue();
    try {
      const deep = expected.slice(-5);
      for (const entry of deep) {
        const found = await reader.findEntry(ALL_TIME, entry.addressKey);
        expect([entry.addressKey, found?.rank]).toEqual([entry.addressKey, entry.rank]);
      }
      const skip = expected.length - 6;
      const page = await reader.readPage(ALL_TIME, { kind: 'offset', skip, size: 3 } as never);
      expect(page.entries.map((e) => [e.rank, e.addressKey])).toEqual(
        expected.slice(skip, skip + 3).map((e) => [e.rank, e.addressKey]),
      );
    } finally {
      settle.mockRestore();
      await runSql(
        dataSource,
        'UPDATE boards SET unfolded_since = NULL, entry_count = entry_count - 7 WHERE space_id = 1 AND sprint_id = 0',
      );
    }
  });

  it('leave the buckets as they were when a write fails', async () => {
    const store = t.app.get(BoardTotalsStore);
    await store.settle(ALL_TIME);
    await tidied();
    const bucketsBefore = await buckets(ALL_TIME);
    const entries = () =>
      runSql(
        dataSource,
        'SELECT address_key, points, reached_at FROM board_entries WHERE space_id = 1 AND sprint_id = 0 ORDER BY address_key',
      );
    const entriesBefore = await entries();
    const deltas = Array.from({ length: 40 }, (_, i) => ({
      addressKey: address(i * 3),
      delta: 50 + i,
      reachedAt: EPOCH + 90 * HOUR,
    }));
    await expect(
      t.app.get(TransactionRunner).run(async (manager) => {
        // Written to board_entries at once on both databases, buckets moved, then a failure.
        await store.add(manager, ALL_TIME, deltas, true);
        await store.boardWritten(manager, ALL_TIME);
        expect(await buckets(ALL_TIME, manager)).not.toEqual(bucketsBefore);
        throw new Error('the write fails');
      }),
    ).rejects.toThrow('the write fails');
    expect(await buckets(ALL_TIME)).toEqual(bucketsBefore);
    expect(await entries()).toEqual(entriesBefore);
    await expectExactBuckets(ALL_TIME);
    await expectRanks(ALL_TIME, bruteForceBoard(events, 1));
    // What the writer keeps of the board (bounds, counts) took nothing from the failed write.
    await write(randomEvents(80, 200));
    await expectExactBuckets(ALL_TIME);
    await expectRanks(ALL_TIME, bruteForceBoard(events, 1));
  });
});
