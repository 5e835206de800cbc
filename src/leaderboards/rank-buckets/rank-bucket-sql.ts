import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { ENTRY_COLUMNS, RANK_ORDER, RANK_ORDER_OUT } from '../ranking/rank-order-sql';

/*
 * The SQL of the rank buckets (board_rank_buckets, see RankBuckets), apart so that a spec can
 * EXPLAIN what runs. Every statement is a few index ranges, each bounded by one bucket's entries
 * or by the board's buckets: none grows with the depth of a key.
 */

/**
 * The head bucket's bound: before every entry in rank order (totals are GraphQL Ints, so no
 * entry reaches these points).
 */
export const HEAD_BOUND: RankKey = { points: 4_294_967_296, reachedAt: 0, addressKey: '' };

export const isHead = (bound: RankKey): boolean => bound.points === HEAD_BOUND.points;

/**
 * Which end of the board the buckets before a bound are summed from: the top (the buckets before
 * it), or the bottom (the board's count less the buckets from it on), whichever has fewer.
 */
export type SumFrom = 'top' | 'bottom';

/** A statement and its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

const BUCKETS = 'board_rank_buckets';
const BOARD = 'space_id = ? AND sprint_id = ?';
const BOUND_COLUMNS = 'points, reached_at AS reachedAt, address_key AS addressKey';
const FORWARD = RANK_ORDER;
const FORWARD_OUT = RANK_ORDER_OUT;

const boardParams = (board: BoardRef) => [board.spaceId, board.sprintId];

/** What the statements need of a dialect. */
type BucketDialect = Pick<SqlDialect, 'withIndex' | 'lockRows' | 'upsert'>;

export class RankBucketSql {
  private readonly entries: string;

  constructor(private readonly dialect: BucketDialect) {
    this.entries = dialect.withIndex('board_entries', 'ix_board_entries_rank');
  }

  /** Every bucket of the board in rank order, with its count; locked where writers lock rows. */
  allBuckets(board: BoardRef, lock: boolean): Statement {
    return {
      sql: `SELECT ${BOUND_COLUMNS}, entry_count AS entryCount FROM ${BUCKETS} WHERE ${BOARD}
        ORDER BY ${FORWARD}${lock ? this.dialect.lockRows('update') : ''}`,
      params: boardParams(board),
    };
  }

  /**
   * The entries strictly ahead of `key`, read in one statement (one moment) given the bucket
   * `bound` that holds it: the counts of the buckets before the bound, plus the entries from the
   * bound up to the key. `present` says whether `bound` is still a bucket's bound (a split or a
   * drop may have changed the buckets since it was found); when it is not, the sum means nothing.
   */
  countAhead(board: BoardRef, bound: RankKey, key: RankKey, from: SumFrom = 'top'): Statement {
    const before = this.bucketsBefore(board, bound, from);
    const present = this.present(board, bound);
    const within = this.within(board, bound, key);
    return {
      sql: `SELECT ${before.sql} AS prior, ${present.sql} AS present, ${within.sql} AS in_bucket`,
      params: [...before.params, ...present.params, ...within.params],
    };
  }

  /**
   * `limit` entries from position `offset` of the bucket `bound` (0-based within it), each with the
   * buckets' sum before the bound and whether it is still a bound, read in the same statement
   * (see countAhead). Three index ranges from the bound, each read up to offset + limit rows.
   */
  pageInBucket(
    board: BoardRef,
    bound: RankKey,
    offset: number,
    limit: number,
    from: SumFrom = 'top',
  ): Statement {
    const before = this.bucketsBefore(board, bound, from);
    const present = this.present(board, bound);
    const b = boardParams(board);
    const reach = offset + limit;
    const checks = `${before.sql} AS prior, ${present.sql} AS present`;
    if (isHead(bound)) {
      return {
        sql: `SELECT ${ENTRY_COLUMNS}, ${checks} FROM ${this.entries}
          WHERE ${BOARD} AND points > 0 ORDER BY ${FORWARD} LIMIT ? OFFSET ?`,
        params: [...before.params, ...present.params, ...b, limit, offset],
      };
    }
    const branch = (predicate: string, order: string, alias: string) =>
      `SELECT * FROM (SELECT ${ENTRY_COLUMNS} FROM ${this.entries} WHERE ${BOARD} AND ${predicate}
         ORDER BY ${order} LIMIT ?) AS ${alias}`;
    return {
      sql: `SELECT page.*, ${checks} FROM (
          ${branch('points = ? AND reached_at = ? AND address_key >= ?', 'address_key ASC', 'from_bound')}
          UNION ALL ${branch('points = ? AND reached_at > ?', 'reached_at ASC, address_key ASC', 'later_reached')}
          UNION ALL ${branch('points < ? AND points > 0', FORWARD, 'fewer_points')}
        ) AS page ORDER BY ${FORWARD_OUT} LIMIT ? OFFSET ?`,
      params: [
        ...before.params,
        ...present.params,
        ...[...b, bound.points, bound.reachedAt, bound.addressKey, reach],
        ...[...b, bound.points, bound.reachedAt, reach],
        ...[...b, bound.points, reach],
        limit,
        offset,
      ],
    };
  }

  /** Adds each count to its bucket's, creating the bucket when it is not there. */
  addCounts(board: BoardRef, counts: ReadonlyArray<readonly [RankKey, number]>): Statement {
    return {
      sql: this.dialect.upsert(
        BUCKETS,
        ['space_id', 'sprint_id', 'points', 'reached_at', 'address_key', 'entry_count'],
        ['space_id', 'sprint_id', 'points', 'reached_at', 'address_key'],
        { entry_count: 'add' },
        counts.length,
      ),
      params: counts.flatMap(([bound, count]) => [
        board.spaceId,
        board.sprintId,
        bound.points,
        bound.reachedAt,
        bound.addressKey,
        count,
      ]),
    };
  }

  setCount(board: BoardRef, bound: RankKey, count: number): Statement {
    return {
      sql: `UPDATE ${BUCKETS} SET entry_count = ? WHERE ${BOARD} AND points = ? AND reached_at = ? AND address_key = ?`,
      params: [count, ...boardParams(board), bound.points, bound.reachedAt, bound.addressKey],
    };
  }

  /** Drops a bucket left without entries: its range joins the bucket before it. */
  dropIfEmpty(board: BoardRef, bound: RankKey): Statement {
    return {
      sql: `DELETE FROM ${BUCKETS} WHERE ${BOARD} AND points = ? AND reached_at = ? AND address_key = ?
        AND entry_count = 0`,
      params: [...boardParams(board), bound.points, bound.reachedAt, bound.addressKey],
    };
  }

  /** Notes that the board's bucket bounds changed (see boards.bucket_layout). */
  layoutChanged(board: BoardRef): Statement {
    return {
      sql: `UPDATE boards SET bucket_layout = bucket_layout + 1 WHERE ${BOARD}`,
      params: boardParams(board),
    };
  }

  dropAll(board: BoardRef): Statement {
    return { sql: `DELETE FROM ${BUCKETS} WHERE ${BOARD}`, params: boardParams(board) };
  }

  /**
   * The board's entries (points > 0), counted, to start its head bucket; with `upTo`, only up to
   * that many (whether the board has reached RANK_BUCKETS.fromEntries).
   */
  countBoard(board: BoardRef, upTo?: number): Statement {
    if (upTo === undefined)
      return {
        sql: `SELECT COUNT(*) AS n FROM ${this.entries} WHERE ${BOARD} AND points > 0`,
        params: boardParams(board),
      };
    return {
      sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${this.entries} WHERE ${BOARD} AND points > 0
        LIMIT ?) AS capped`,
      params: [...boardParams(board), upTo],
    };
  }

  /**
   * The entries before `bound` (the sum of the counts of the buckets before it), as three index
   * ranges of the buckets. From the bottom: the board's entry count less the buckets from the
   * bound on, which reads the buckets after the bound instead of those before it; NULL when
   * board_entries may lack some of the board's counted changes (SQLite's unfolded_since), where
   * the count and the buckets disagree.
   */
  private bucketsBefore(board: BoardRef, bound: RankKey, from: SumFrom): Statement {
    if (isHead(bound)) return { sql: '0', params: [] };
    const b = boardParams(board);
    const sum = (predicate: string) =>
      `(SELECT COALESCE(SUM(entry_count), 0) FROM ${BUCKETS} WHERE ${BOARD} AND ${predicate})`;
    if (from === 'bottom') {
      return {
        sql: `(SELECT entry_count - ${sum('points < ?')} - ${sum('points = ? AND reached_at > ?')}
          - ${sum('points = ? AND reached_at = ? AND address_key >= ?')}
          FROM boards WHERE ${BOARD} AND unfolded_since IS NULL)`,
        params: [
          ...[...b, bound.points],
          ...[...b, bound.points, bound.reachedAt],
          ...[...b, bound.points, bound.reachedAt, bound.addressKey],
          ...b,
        ],
      };
    }
    return {
      sql: `(${sum('points > ?')} + ${sum('points = ? AND reached_at < ?')}
        + ${sum('points = ? AND reached_at = ? AND address_key < ?')})`,
      params: [
        ...[...b, bound.points],
        ...[...b, bound.points, bound.reachedAt],
        ...[...b, bound.points, bound.reachedAt, bound.addressKey],
      ],
    };
  }

  private present(board: BoardRef, bound: RankKey): Statement {
    return {
      sql: `(SELECT COUNT(*) FROM ${BUCKETS} WHERE ${BOARD} AND points = ? AND reached_at = ? AND address_key = ?)`,
      params: [...boardParams(board), bound.points, bound.reachedAt, bound.addressKey],
    };
  }

  /**
   * The entries in [bound, key) as index ranges, by how the two keys compare: every range lies
   * between them, so within the bucket that holds the key.
   */
  private within(board: BoardRef, bound: RankKey, key: RankKey): Statement {
    const b = boardParams(board);
    const count = (predicate: string) =>
      `(SELECT COUNT(*) FROM ${this.entries} WHERE ${BOARD} AND ${predicate})`;
    const parts: Array<[string, unknown[]]> = [];
    if (isHead(bound)) {
      // From the start of the board: the entries ahead of the key, as SqlBoardReader counted them.
      parts.push(
        ['points > ?', [key.points]],
        ['points = ? AND reached_at < ?', [key.points, key.reachedAt]],
        [
          'points = ? AND reached_at = ? AND address_key < ?',
          [key.points, key.reachedAt, key.addressKey],
        ],
      );
    } else if (bound.points === key.points && bound.reachedAt === key.reachedAt) {
      parts.push([
        'points = ? AND reached_at = ? AND address_key >= ? AND address_key < ?',
        [key.points, key.reachedAt, bound.addressKey, key.addressKey],
      ]);
    } else if (bound.points === key.points) {
      parts.push(
        [
          'points = ? AND reached_at = ? AND address_key >= ?',
          [bound.points, bound.reachedAt, bound.addressKey],
        ],
        [
          'points = ? AND reached_at > ? AND reached_at < ?',
          [bound.points, bound.reachedAt, key.reachedAt],
        ],
        [
          'points = ? AND reached_at = ? AND address_key < ?',
          [key.points, key.reachedAt, key.addressKey],
        ],
      );
    } else {
      parts.push(
        [
          'points = ? AND reached_at = ? AND address_key >= ?',
          [bound.points, bound.reachedAt, bound.addressKey],
        ],
        ['points = ? AND reached_at > ?', [bound.points, bound.reachedAt]],
        ['points < ? AND points > ?', [bound.points, key.points]],
        ['points = ? AND reached_at < ?', [key.points, key.reachedAt]],
        [
          'points = ? AND reached_at = ? AND address_key < ?',
          [key.points, key.reachedAt, key.addressKey],
        ],
      );
    }
    return {
      sql: `(${parts.map(([predicate]) => count(predicate)).join(' + ')})`,
      params: parts.flatMap(([, params]) => [...b, ...params]),
    };
  }
}
