import { Injectable } from '@nestjs/common';
import { chunk, num, SqlDialect } from '../../storage/dialect/sql-dialect';
import { ReadReplicas } from '../../storage/replica/read-replicas';
import { InjectSqlDialect } from '../../storage/sql-dialect.provider';
import { BoardTotalsStore } from '../ledger/board-totals.store';
import { BoardPage, BoardReader, RankedEntry, rankEntries } from './board-reader';
import type { PageRequest } from '../paging/page-request';
import { BoardSql, boardSql, countAheadParams, keysetPageParams } from './board-sql';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { RankBucketSql, Statement, SumFrom } from '../rank-buckets/rank-bucket-sql';
import { bucketIndexOf, keyOfRow } from '../rank-buckets/rank-buckets';
import { BucketHints, nearerEnd, priorIndexOf } from '../rank-buckets/bucket-hints';

interface EntryRow {
  addressKey: string;
  points: number | string;
  reachedAt: number | string;
}

/** Reads of the buckets that found them changed in between, before counting the old way. */
const BUCKET_ATTEMPTS = 3;
/** Boards per statement of {@link SqlBoardReader.entriesOf}. */
const BOARDS_PER_READ = 500;

/**
 * Keyset pages over the rank index; "after key" is a UNION ALL of three index ranges, since SQLite
 * scans the equivalent OR. Ranks and offset pages go through the board's rank buckets (see
 * RankBuckets): bounded by a bucket's entries and the board's buckets, not by the depth, in one
 * statement each, which checks the bucket it starts from (BucketHints). A board without buckets
 * counts the entries ahead, O(depth). totalCount is the `boards` counter.
 * Unwritten totals are settled first (BoardTotalsStore.settle). With read replicas, the reads go
 * to one that has every write this instance acknowledged (ReadReplicas), else to the primary.
 */
@Injectable()
export class SqlBoardReader extends BoardReader {
  private readonly sql: BoardSql;
  private readonly buckets: RankBucketSql;
  private readonly hints: BucketHints;

  constructor(
    /** The primary, or a replica that has every write this instance acknowledged. */
    private readonly reads: ReadReplicas,
    private readonly totalsStore: BoardTotalsStore,
    @InjectSqlDialect() dialect: SqlDialect,
  ) {
    super();
    this.sql = boardSql(dialect);
    this.buckets = new RankBucketSql(dialect);
    this.hints = new BucketHints((board) => this.query(this.buckets.allBuckets(board, false)));
  }

  async readPage(board: BoardRef, request: PageRequest): Promise<BoardPage> {
    await this.totalsStore.settle(board);
    const size = request.size;
    const totalCount = await this.countEntries(board);
    switch (request.kind) {
      case 'first':
      case 'offset': {
        const skip = request.kind === 'offset' ? request.skip : 0;
        const rows = await this.offsetRows(board, skip, size + 1, totalCount);
        return this.forwardPage(rows, size, skip + 1, totalCount, skip > 0 && totalCount > 0);
      }
      case 'after': {
        const rows = await this.rows(
          this.sql.pageAfter,
          keysetPageParams(board, request.key, size + 1),
        );
        const firstRank =
          rows.length > 0 ? (await this.aheadOf(board, rows[0])) + 1 : totalCount + 1;
        return this.forwardPage(rows, size, firstRank, totalCount, totalCount > 0);
      }
      case 'before': {
        const rows = await this.rows(
          this.sql.pageBefore,
          keysetPageParams(board, request.key, size + 1),
        );
        const hasPreviousPage = rows.length > size;
        const entries = rows.slice(0, size).reverse();
        const firstRank = entries.length > 0 ? (await this.aheadOf(board, entries[0])) + 1 : 1;
        const ranked = entries.map((entry, i) => ({ ...entry, rank: firstRank + i }));
        const lastRank = ranked.length > 0 ? ranked[ranked.length - 1].rank : 0;
        return {
          entries: ranked,
          totalCount,
          hasPreviousPage,
          hasNextPage: ranked.length > 0 && lastRank < totalCount,
        };
      }
    }
  }

  async findEntry(board: BoardRef, addressKey: string): Promise<RankedEntry | null> {
    await this.totalsStore.settle(board);
    const [row] = await this.rows(this.sql.findEntry, [board.spaceId, board.sprintId, addressKey]);
    if (!row) return null;
    return { ...row, rank: (await this.aheadOf(board, row)) + 1 };
  }

  async findEntries(
    spaceId: number,
    sprintIds: readonly number[],
    addressKey: string,
  ): Promise<Map<number, RankedEntry>> {
    const entries = await this.entriesOf(spaceId, sprintIds, addressKey);
    return rankEntries(entries, (sprintId, key) => this.aheadOf({ spaceId, sprintId }, key));
  }

  /**
   * The address's entries on the boards `sprintIds` of a space, unranked, by sprint id: primary
   * key lookups, {@link BOARDS_PER_READ} boards a statement, after settling each board.
   */
  async entriesOf(
    spaceId: number,
    sprintIds: readonly number[],
    addressKey: string,
  ): Promise<Map<number, RankKey>> {
    for (const sprintId of sprintIds) await this.totalsStore.settle({ spaceId, sprintId });
    const entries = new Map<number, RankKey>();
    for (const ids of chunk(sprintIds, BOARDS_PER_READ)) {
      const rows: Array<EntryRow & { sprintId: number | string }> = await this.reads.query(
        `SELECT sprint_id AS sprintId, address_key AS addressKey, points, reached_at AS reachedAt
         FROM board_entries WHERE space_id = ? AND sprint_id IN (${ids.map(() => '?').join(', ')})
           AND address_key = ? AND points > 0`,
        [spaceId, ...ids, addressKey],
      );
      for (const row of rows)
        entries.set(num(row.sprintId), {
          addressKey: row.addressKey,
          points: num(row.points),
          reachedAt: num(row.reachedAt),
        });
    }
    return entries;
  }

  async countEntries(board: BoardRef): Promise<number> {
    const [row]: Array<Record<string, unknown>> = await this.reads.query(this.sql.countEntries, [
      board.spaceId,
      board.sprintId,
    ]);
    return row ? num(row.entryCount) : 0;
  }

  async countAhead(board: BoardRef, key: RankKey): Promise<number> {
    await this.totalsStore.settle(board);
    return this.aheadOf(board, key);
  }

  /**
   * Entries strictly ahead of `key` in rank order, on a settled board: the buckets before the
   * bucket that holds it and the entries of that bucket before it, in one statement, given the
   * bucket's bound (from the board's hints). The statement also says whether that bound is still
   * a bucket's (a split or a drop may have changed them since the hints were read): when not,
   * again with fresh hints. Without buckets, counted from the top.
   */
  private async aheadOf(board: BoardRef, key: RankKey): Promise<number> {
    for (let attempt = 0; attempt < BUCKET_ATTEMPTS; attempt++) {
      const hints = await this.hints.of(board, attempt > 0);
      if (hints.bounds.length === 0) break;
      const at = bucketIndexOf(hints.bounds.length, (i) => hints.bounds[i], key);
      const [row] = await this.fromNearerEnd(nearerEnd(hints, at), (from) =>
        this.query(this.buckets.countAhead(board, hints.bounds[at], key, from)),
      );
      if (num(row.present) > 0) return num(row.prior) + num(row.in_bucket);
    }
    const [row]: Array<Record<string, unknown>> = await this.reads.query(
      this.sql.countAhead,
      countAheadParams(board, key),
    );
    return num(row.ahead);
  }

  /**
   * `limit` entries from position `skip`: from the bound of the bucket the hints place that
   * position in, skipping the entries between the bound and the position. The statement answers
   * the buckets' sum before the bound and whether it is still one: when the sum is not the one
   * the skip assumed, again with that sum (the same bound, unless the position now lies before
   * it), and with fresh hints when the bound is gone. Without buckets, LIMIT/OFFSET over the
   * whole board.
   */
  private async offsetRows(
    board: BoardRef,
    skip: number,
    limit: number,
    totalCount: number,
  ): Promise<RankKey[]> {
    if (skip > 0) {
      if (skip >= totalCount) return [];
      // A bound to start from, and the entries before it as last known.
      let start: { bound: RankKey; prior: number; from: SumFrom } | undefined;
      for (let attempt = 0; attempt <= BUCKET_ATTEMPTS; attempt++) {
        const hints = await this.hints.of(board, attempt > 0 && !start);
        if (hints.bounds.length === 0) break;
        if (!start) {
          const at = priorIndexOf(hints.priors, skip);
          start = { bound: hints.bounds[at], prior: hints.priors[at], from: nearerEnd(hints, at) };
        }
        const { bound, prior, from: end } = start;
        const rows = await this.fromNearerEnd(end, (from) =>
          this.query(this.buckets.pageInBucket(board, bound, skip - prior, limit, from)),
        );
        start = undefined;
        if (rows.length === 0 || num(rows[0].present) === 0) continue;
        const exact = num(rows[0].prior);
        if (exact === prior) return rows.map(keyOfRow);
        if (exact <= skip) start = { bound, prior: exact, from: end };
      }
    }
    return this.rows(this.sql.offsetPage, [board.spaceId, board.sprintId, limit, skip]);
  }

  /**
   * Runs a bucket statement summing from `from`; when summed from the bottom and the board's count
   * could not be used (NULL: SQLite's entries not all folded in), again from the top.
   */
  private async fromNearerEnd(
    from: SumFrom,
    run: (from: SumFrom) => Promise<Array<Record<string, unknown>>>,
  ): Promise<Array<Record<string, unknown>>> {
    const rows = await run(from);
    if (from === 'bottom' && rows.length > 0 && rows[0].prior === null) return run('top');
    return rows;
  }

  private query(statement: Statement): Promise<Array<Record<string, unknown>>> {
    return this.reads.query(statement.sql, statement.params);
  }

  private forwardPage(
    rows: RankKey[],
    size: number,
    firstRank: number,
    totalCount: number,
    hasPreviousPage: boolean,
  ): BoardPage {
    const entries = rows.slice(0, size).map((row, i) => ({ ...row, rank: firstRank + i }));
    return {
      entries,
      totalCount,
      hasNextPage: rows.length > size,
      hasPreviousPage: entries.length > 0 ? firstRank > 1 : hasPreviousPage,
    };
  }

  private async rows(sql: string, parameters: unknown[]): Promise<RankKey[]> {
    const raw: EntryRow[] = await this.reads.query(sql, parameters);
    return raw.map((row) => ({
      addressKey: row.addressKey,
      points: num(row.points),
      reachedAt: num(row.reachedAt),
    }));
  }
}
