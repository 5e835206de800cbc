import type { PointsBucket, PointsDistribution } from './views/board-charts';

export type { PointsBucket, PointsDistribution };
import type { BoardReader } from '../../leaderboards/read/board-reader';
import type { BoardRef, RankKey } from '../../leaderboards/ranking/ranking';

export const MAX_BUCKETS = 20;
/** Linear boards aim at this many buckets (a round step can make a few more). */
const LINEAR_BUCKETS = 16;
/** A distribution is read again after this long: the chart may be this much older than the table. */
export const DISTRIBUTION_TTL_MS = 30_000;
/** Boards whose distribution is kept; past this, the one read longest ago goes (first in, first out). */
const DISTRIBUTION_LIMIT = 1_000;
/**
 * A key that ranks after every entry with at least `points` and before every other: points are
 * whole numbers, and no entry reached its total before year 0000 (the earliest time a record may
 * carry), far later than MIN_SAFE_INTEGER ms. So the entries ahead of it are those with >= points.
 */
const below = (points: number): RankKey => ({
  points: points - 1,
  reachedAt: Number.MIN_SAFE_INTEGER,
  addressKey: '',
});
/** After every entry of the board: entries are above 0 points. */
const BOARD_END = below(1);

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
 * The points distribution of boards for the space page's chart, from O(log n) reads of the board
 * reader (the rank index, else the rank buckets): its first and last entries for the range of
 * points, then for each bucket's lower edge the entries at or above it, counted as the entries
 * ahead of {@link below}(edge); a bucket holds the difference between its edge's count and the
 * next one's. About 22 reads, whatever the board's size; each board's is still kept for
 * {@link DISTRIBUTION_TTL_MS}, and concurrent page views share one read. The reads are not one
 * snapshot: a write between them can shift an entry from one bar to the next.
 */
export class BoardDistributions {
  private readonly recent = new Map<
    string,
    { until: number; value: Promise<PointsDistribution> }
  >();

  constructor(
    private readonly reader: BoardReader,
    private readonly ttlMs = DISTRIBUTION_TTL_MS,
  ) {}

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
    const top = await this.reader.readPage(board, { kind: 'first', size: 1 });
    // The last entry: the one just before the end of the board, whatever its count is by now.
    const bottom = await this.reader.readPage(board, { kind: 'before', key: BOARD_END, size: 1 });
    const [first, last] = [top.entries[0], bottom.entries[0]];
    if (!first || !last) return { scale: 'linear', buckets: [], entries: 0, asOf };
    const max = Math.max(first.points, last.points);
    const { scale, edges } = bucketEdges(last.points, max);
    // The first edge is at most the lowest total: every entry is at or above it.
    const atLeast = [bottom.totalCount];
    for (const edge of edges.slice(1))
      atLeast.push(await this.reader.countAhead(board, below(edge)));
    const buckets = edges.map((from, i) => ({
      from,
      to: i + 1 < edges.length ? edges[i + 1] - 1 : max,
      entries: Math.max(0, atLeast[i] - (atLeast[i + 1] ?? 0)),
    }));
    return { scale, buckets, entries: buckets.reduce((sum, b) => sum + b.entries, 0), asOf };
  }
}
