import { num } from '../../storage/dialect/sql-dialect';
import type { BoardRef, RankKey } from '../ranking/ranking';
import type { SumFrom } from './rank-bucket-sql';
import { keyOfRow } from './rank-buckets';

/**
 * A board's bucket bounds in rank order, the entries before each, and the entries of all, as read
 * at one moment.
 */
export interface Hints {
  bounds: RankKey[];
  priors: number[];
  total: number;
}

/** How long hints serve before they are read again. */
const FRESH_MS = 5_000;
/** How soon after a read a failed check may read them again (a board under heavy writes). */
const RETRY_MS = 1_000;
/** Boards whose hints are kept: the most recently used. */
const MAX_BOARDS = 64;

/**
 * A reader's hints of the boards' rank buckets, so that a rank or an offset page is one statement
 * instead of a search of the buckets and then the count. Only hints: each statement that starts
 * from a bound checks that it is still one and answers the exact sum of the buckets before it,
 * so stale hints cost a retry, never a wrong rank. A board without buckets has empty hints, and
 * its reads count from the top without asking for buckets each time.
 */
export class BucketHints {
  private readonly boards = new Map<string, { hints: Hints; readAt: number }>();
  private readonly reading = new Map<string, Promise<Hints>>();

  /** `read`: the board's buckets in rank order, with their counts (RankBucketSql.allBuckets). */
  constructor(
    private readonly read: (board: BoardRef) => Promise<Array<Record<string, unknown>>>,
  ) {}

  /** The board's hints; `failed`: the last ones failed a check, read them again unless just read. */
  of(board: BoardRef, failed: boolean): Promise<Hints> {
    const key = `${board.spaceId}/${board.sprintId}`;
    const known = this.boards.get(key);
    if (known && Date.now() - known.readAt < (failed ? RETRY_MS : FRESH_MS)) {
      // Most recently used last, so that the first is the one to forget.
      this.boards.delete(key);
      this.boards.set(key, known);
      return Promise.resolve(known.hints);
    }
    let reading = this.reading.get(key);
    if (!reading) {
      reading = this.load(key, board).finally(() => this.reading.delete(key));
      this.reading.set(key, reading);
    }
    return reading;
  }

  private async load(key: string, board: BoardRef): Promise<Hints> {
    const rows = await this.read(board);
    const hints: Hints = { bounds: [], priors: [], total: 0 };
    let prior = 0;
    for (const row of rows) {
      hints.bounds.push(keyOfRow(row));
      hints.priors.push(prior);
      prior += num(row.entryCount);
    }
    hints.total = prior;
    this.boards.delete(key);
    this.boards.set(key, { hints, readAt: Date.now() });
    if (this.boards.size > MAX_BOARDS) this.boards.delete(this.boards.keys().next().value!);
    return hints;
  }
}

/**
 * Which end to sum the buckets before the `at`th from: the nearer (the statement reads the buckets
 * between that end and the bound).
 */
export function nearerEnd(hints: Hints, at: number): SumFrom {
  return hints.priors[at] > hints.total / 2 ? 'bottom' : 'top';
}

/** The index of the bucket that holds position `skip` by `priors`: the last prior at or below it. */
export function priorIndexOf(priors: readonly number[], skip: number): number {
  let low = 0;
  let high = priors.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (priors[mid] <= skip) low = mid;
    else high = mid - 1;
  }
  return low;
}
