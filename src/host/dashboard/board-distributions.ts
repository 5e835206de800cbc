import type { BoardTotalsStore } from '../../leaderboards/ledger/board-totals.store';
import type { BoardRef } from '../../leaderboards/ranking/ranking';
import { num, SqlDialect } from '../../storage/dialect/sql-dialect';
import type { ReadReplicas } from '../../storage/replica/read-replicas';

/** Entries whose points lie in [from, to]. */
export interface PointsBucket {
  from: number;
  to: number;
  entries: number;
}

/** How a board's entries spread over their points, as of `asOf` (ms). */
export interface PointsDistribution {
  /** `log`: buckets on the 1-2-5 series, for boards whose points span two decades or more. */
  scale: 'log' | 'linear';
  buckets: PointsBucket[];
  entries: number;
  asOf: number;
}

export const MAX_BUCKETS = 20;
/** Linear boards aim at this many buckets (a round step can make a few more). */
const LINEAR_BUCKETS = 16;
/** A distribution is read again after this long: the chart may be this much older than the table. */
export const DISTRIBUTION_TTL_MS = 30_000;
/** Boards whose distribution is kept; the least recently read go first. */
const DISTRIBUTION_LIMIT = 1_000;

/** The smallest 1, 2 or 5 × 10^k that is at least `value`. */
function niceStep(value: number): number {
  let power = 1;
  while (power * 10 < value) power *= 10;
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= value)!;
}

/** The 1-2-5 series (or decades) from the largest such value at most `min`, up to `max`. */
function logEdges(min: number, max: number, multipliers: readonly number[]): number[] {
  const series: number[] = [];
  for (let power = 1; power <= max; power *= 10)
    for (const m of multipliers) if (m * power <= max) series.push(m * power);
  const start = series.findLastIndex((edge) => edge <= min);
  return series.slice(Math.max(0, start));
}

/**
 * The lower bounds of the buckets for points from `min` to `max` (both above 0): log-scale when
 * they span two decades or more (a few entries with very many points would otherwise leave one
 * bar), linear with a round step otherwise.
 */
export function bucketEdges(
  min: number,
  max: number,
): { scale: 'log' | 'linear'; edges: number[] } {
  if (max >= min * 100) {
    const edges = logEdges(min, max, [1, 2, 5]);
    return { scale: 'log', edges: edges.length <= MAX_BUCKETS ? edges : logEdges(min, max, [1]) };
  }
  const step = niceStep((max - min + 1) / LINEAR_BUCKETS);
  const edges: number[] = [];
  for (let edge = Math.floor(min / step) * step; edge <= max; edge += step)
    edges.push(Math.max(edge, 1));
  return { scale: 'linear', edges };
}

/**
 * The points distribution of boards for the space page's chart. Reading one costs a scan of the
 * board's range of ix_board_entries_rank (one GROUP BY over the bucket each entry falls in, on
 * SQLite and MySQL/MariaDB alike) after two index seeks for the highest and lowest points, so each
 * board's is kept for {@link DISTRIBUTION_TTL_MS} and concurrent page views share one read.
 */
export class BoardDistributions {
  private readonly recent = new Map<
    string,
    { until: number; value: Promise<PointsDistribution> }
  >();
  private readonly ranked: string;

  constructor(
    private readonly reads: ReadReplicas,
    private readonly totals: BoardTotalsStore,
    dialect: SqlDialect,
    private readonly ttlMs = DISTRIBUTION_TTL_MS,
  ) {
    this.ranked = dialect.withIndex('board_entries', 'ix_board_entries_rank');
  }

  of(board: BoardRef): Promise<PointsDistribution> {
    const key = `${board.spaceId}:${board.sprintId}`;
    const now = performance.now();
    const hit = this.recent.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = this.read(board);
    this.recent.delete(key);
    if (this.recent.size >= DISTRIBUTION_LIMIT)
      this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(key, { until: now + this.ttlMs, value });
    // A failed read is not kept: the next page view tries again.
    value.catch(() => {
      if (this.recent.get(key)?.value === value) this.recent.delete(key);
    });
    return value;
  }

  private async read(board: BoardRef): Promise<PointsDistribution> {
    const asOf = Date.now();
    // SQLite's backlog may hold changes board_entries does not have yet.
    await this.totals.settle(board);
    const onBoard = 'space_id = ? AND sprint_id = ? AND points > 0';
    const ids = [board.spaceId, board.sprintId];
    const [ends] = await this.reads.query(
      `SELECT (SELECT points FROM ${this.ranked} WHERE ${onBoard} ORDER BY points DESC LIMIT 1) AS top,
              (SELECT points FROM ${this.ranked} WHERE ${onBoard} ORDER BY points ASC LIMIT 1) AS bottom`,
      [...ids, ...ids],
    );
    if (!ends || ends.top === null || ends.bottom === null)
      return { scale: 'linear', buckets: [], entries: 0, asOf };
    const [min, max] = [num(ends.bottom), num(ends.top)];
    const { scale, edges } = bucketEdges(min, max);
    // The highest bucket first: each entry takes the first bound it reaches.
    const cases = edges
      .map((_, i) => edges.length - 1 - i)
      .map((i) => `WHEN points >= ? THEN ${i}`)
      .join(' ');
    const rows = await this.reads.query(
      `SELECT CASE ${cases} ELSE 0 END AS bucket, COUNT(*) AS entries
       FROM ${this.ranked} WHERE ${onBoard} GROUP BY bucket`,
      [...[...edges].reverse(), ...ids],
    );
    const counts = new Map(rows.map((row) => [num(row.bucket), num(row.entries)]));
    const buckets = edges.map((from, i) => ({
      from,
      to: i + 1 < edges.length ? edges[i + 1] - 1 : max,
      entries: counts.get(i) ?? 0,
    }));
    return { scale, buckets, entries: buckets.reduce((sum, b) => sum + b.entries, 0), asOf };
  }
}
