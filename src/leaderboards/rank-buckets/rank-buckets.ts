import { num } from '../../storage/dialect/sql-dialect';
import { compareRankKeys, type BoardRef, type RankKey } from '../ranking/ranking';
import { HEAD_BOUND, isHead, RankBucketSql, Statement } from './rank-bucket-sql';

/*
 * Rank buckets: an order-statistic layer over board_entries in SQL, so that a board served from
 * SQL (over the rank indexes' memory budget, or with them off) counts the entries ahead of a key,
 * and finds position N, in time bounded by the bucket size and the number of buckets instead of
 * the depth. Each bucket (board_rank_buckets) is a lower bound in rank order and the number of
 * the board's entries from it up to the next bound; the head bucket's bound precedes every entry.
 *
 * Every write of board_entries moves its entries' counts in the same transaction (the old key's
 * bucket down, the new key's up): DirectBoardTotalsStore on MySQL/MariaDB, the backlog's fold on
 * SQLite, a sprint's rebuild. Buckets that grow past twice RANK_BUCKETS.size are split at the
 * entry RANK_BUCKETS.size from their bound, and a bucket left empty is dropped; neither is needed
 * for the counts to be right, only for them to stay cheap. A board without buckets is one implicit
 * bucket: readers count as before. A board gets its head bucket from the first write (or rebuild)
 * that finds it at RANK_BUCKETS.fromEntries entries or more, and keeps its buckets from then on;
 * below that, counting ahead is as cheap as a bucket, and writers leave buckets alone.
 */

/**
 * `size`: the bucket size aimed at; a bucket is split once it holds more than twice as many.
 * `fromEntries`: the size from which a board keeps buckets.
 */
export const RANK_BUCKETS = {
  size: 2048,
  get fromEntries(): number {
    return 4 * this.size;
  },
};

/**
 * Splits a write of `moves` entries makes at most: enough for what it adds (a bucket per
 * RANK_BUCKETS.size entries) and a few more, so that a board left with large buckets (one whose
 * head bucket was just made from many entries) is split over the next writes, none of them long.
 */
export const splitsFor = (moves: number): number => 8 + Math.ceil(moves / RANK_BUCKETS.size);

/** One entry's change: its key before and after, null when it is not on the board (0 points or less). */
export interface EntryMove {
  before: RankKey | null;
  after: RankKey | null;
}

/** A statement to run: rows answered for reads, nothing for writes. */
export interface BucketStep extends Statement {
  write?: true;
}

type Row = Record<string, unknown>;

/** A piece of bucket work: yields statements, receives their rows, returns its answer. */
export type BucketWork<T> = Generator<BucketStep, T, Row[]>;

/** Runs bucket work on a synchronous connection (SQLite's native one). */
export function runSync<T>(work: BucketWork<T>, run: (step: BucketStep) => Row[]): T {
  let next = work.next();
  while (!next.done) next = work.next(run(next.value));
  return next.value;
}

/** Runs bucket work through an asynchronous query function (a manager's, a data source's). */
export async function runAsync<T>(
  work: BucketWork<T>,
  query: (sql: string, params: unknown[]) => Promise<unknown>,
): Promise<T> {
  let next = work.next();
  while (!next.done) {
    const rows = await query(next.value.sql, next.value.params);
    next = work.next(next.value.write ? [] : (rows as Row[]));
  }
  return next.value;
}

export interface Bucket {
  bound: RankKey;
  count: number;
}

/** What a write left to tidy: buckets to split, buckets to drop. */
export interface Untidy {
  oversized: Bucket[];
  empty: RankKey[];
}

export const keyOfRow = (row: Row): RankKey => ({
  points: num(row.points),
  reachedAt: num(row.reachedAt),
  addressKey: String(row.addressKey),
});

const oversized = (count: number) => count > 2 * RANK_BUCKETS.size;

/**
 * Moves the counts of the board's buckets by `moves`, inside the transaction that wrote them to
 * board_entries, after those writes. `buckets`: the board's buckets as the caller knows them
 * current (MySQL), else read here (SQLite, whose writer holds the whole database). `entriesNow`:
 * the board's entries as this transaction leaves them, for a board without buckets yet (its head
 * bucket starts with them all).
 * `rowsPerStatement`: 1 where statements are prepared once and run row by row (SQLite).
 */
export function* moveCounts(
  sql: RankBucketSql,
  board: BoardRef,
  moves: readonly EntryMove[],
  options: {
    entriesNow: () => BucketWork<number>;
    rowsPerStatement: number;
    /** The board's buckets, already read by the caller (with bounds known to be current). */
    buckets?: readonly Bucket[];
    /** Told of each count moved, by the bucket's index in `buckets`. */
    moved?: (at: number, delta: number) => void;
  },
): BucketWork<Untidy> {
  const untidy: Untidy = { oversized: [], empty: [] };
  if (moves.length === 0) return untidy;
  const buckets = options.buckets ?? bucketsOf(yield sql.allBuckets(board, false));
  if (buckets.length === 0) {
    const count = yield* options.entriesNow();
    if (count < RANK_BUCKETS.fromEntries) return untidy;
    yield { ...sql.addCounts(board, [[HEAD_BOUND, count]]), write: true };
    yield { ...sql.layoutChanged(board), write: true };
    if (oversized(count)) untidy.oversized.push({ bound: HEAD_BOUND, count });
    return untidy;
  }
  const deltas = new Map<number, number>();
  const move = (key: RankKey, by: number) => {
    const at = bucketIndexOf(buckets.length, (i) => buckets[i].bound, key);
    deltas.set(at, (deltas.get(at) ?? 0) + by);
  };
  for (const { before, after } of moves) {
    if (before) move(before, -1);
    if (after) move(after, 1);
  }
  const changed = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => a - b);
  for (let i = 0; i < changed.length; i += options.rowsPerStatement) {
    const part = changed.slice(i, i + options.rowsPerStatement);
    yield {
      ...sql.addCounts(
        board,
        part.map(([at, delta]) => [buckets[at].bound, delta] as const),
      ),
      write: true,
    };
  }
  for (const [at, delta] of changed) {
    const bucket = { bound: buckets[at].bound, count: buckets[at].count + delta };
    options.moved?.(at, delta);
    if (oversized(bucket.count)) untidy.oversized.push(bucket);
    else if (bucket.count === 0 && !isHead(bucket.bound)) untidy.empty.push(bucket.bound);
  }
  return untidy;
}

/**
 * Splits the oversized buckets (each at the entry RANK_BUCKETS.size from its bound, again while
 * the rest is oversized, `maxSplits` in all) and drops the empty ones. The counts must be exact
 * as read: in the writer's transaction, or under the board's lock with the latest entries.
 */
export function* tidy(
  sql: RankBucketSql,
  board: BoardRef,
  untidy: Untidy,
  maxSplits: number,
): BucketWork<number> {
  for (const bound of untidy.empty) yield { ...sql.dropIfEmpty(board, bound), write: true };
  if (untidy.empty.length > 0 || untidy.oversized.length > 0)
    yield { ...sql.layoutChanged(board), write: true };
  const size = RANK_BUCKETS.size;
  let splits = 0;
  for (let { bound, count } of untidy.oversized) {
    while (oversized(count) && splits < maxSplits) {
      const [row] = yield sql.pageInBucket(board, bound, size, 1);
      if (!row) break; // the bucket holds fewer entries than counted: a bug, and nothing to split
      const middle = keyOfRow(row);
      yield { ...sql.setCount(board, bound, size), write: true };
      yield { ...sql.addCounts(board, [[middle, count - size]]), write: true };
      splits++;
      bound = middle;
      count -= size;
    }
  }
  return splits;
}

/**
 * Makes the board's buckets again from its entries, RANK_BUCKETS.size each (none for a board under
 * RANK_BUCKETS.fromEntries): after a rebuild of the board, or for one filled outside the service.
 * Answers how many buckets it made.
 */
export function* rebuildBuckets(sql: RankBucketSql, board: BoardRef): BucketWork<number> {
  yield { ...sql.dropAll(board), write: true };
  yield { ...sql.layoutChanged(board), write: true };
  const [row] = yield sql.countBoard(board);
  const count = num(row.n);
  if (count < RANK_BUCKETS.fromEntries) return 0;
  yield { ...sql.addCounts(board, [[HEAD_BOUND, count]]), write: true };
  const splits = yield* tidy(
    sql,
    board,
    { oversized: oversized(count) ? [{ bound: HEAD_BOUND, count }] : [], empty: [] },
    Infinity,
  );
  return splits + 1;
}

/**
 * For a maintenance pass under the board's lock: its buckets to split and drop, read locked.
 */
export function* untidyBuckets(sql: RankBucketSql, board: BoardRef): BucketWork<Untidy> {
  const untidy: Untidy = { oversized: [], empty: [] };
  const rows = yield sql.allBuckets(board, true);
  for (const row of rows) {
    const bucket = { bound: keyOfRow(row), count: num(row.entryCount) };
    if (oversized(bucket.count)) untidy.oversized.push(bucket);
    else if (bucket.count === 0 && !isHead(bucket.bound)) untidy.empty.push(bucket.bound);
  }
  return untidy;
}

export const bucketsOf = (rows: readonly Row[]): Bucket[] =>
  rows.map((row) => ({ bound: keyOfRow(row), count: num(row.entryCount) }));

/**
 * The index of the bucket holding `key`: the last of `count` bounds (`boundAt(i)`, in rank order)
 * at or before it.
 */
export function bucketIndexOf(
  count: number,
  boundAt: (i: number) => RankKey,
  key: RankKey,
): number {
  let low = 0;
  let high = count - 1;
  // The first bound is the head's, at or before every key.
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (compareRankKeys(boundAt(mid), key) <= 0) low = mid;
    else high = mid - 1;
  }
  return low;
}
