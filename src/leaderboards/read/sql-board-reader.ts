import { Injectable } from '@nestjs/common';
import { num, SqlDialect } from '../../storage/dialect/sql-dialect';
import { ReadReplicas } from '../../storage/replica/read-replicas';
import { InjectSqlDialect } from '../../storage/dialect/sql-dialect.provider';
import { BoardTotalsStore } from '../ledger/board-totals.store';
import { BoardPage, BoardReader, RankedEntry } from './board-reader';
import type { PageRequest } from '../paging/page-request';
import { BoardSql, boardSql, countAheadParams, keysetPageParams } from './board-sql';
import type { BoardRef, RankKey } from '../ranking/ranking';

interface EntryRow {
  addressKey: string;
  points: number | string;
  reachedAt: number | string;
}

/**
 * Keyset pages over the rank index; "after key" is a UNION ALL of three index ranges, since SQLite
 * scans the equivalent OR. Ranks count the entries ahead (O(depth), what the rank indexes avoid);
 * totalCount is the `boards` counter. Unwritten totals are settled first (BoardTotalsStore.settle).
 * With read replicas, the reads go to one that has every write this instance acknowledged
 * (ReadReplicas), else to the primary.
 */
@Injectable()
export class SqlBoardReader extends BoardReader {
  private readonly sql: BoardSql;

  constructor(
    /** The primary, or a replica that has every write this instance acknowledged. */
    private readonly reads: ReadReplicas,
    private readonly totalsStore: BoardTotalsStore,
    @InjectSqlDialect() dialect: SqlDialect,
  ) {
    super();
    this.sql = boardSql(dialect);
  }

  async readPage(board: BoardRef, request: PageRequest): Promise<BoardPage> {
    await this.totalsStore.settle(board);
    const size = request.size;
    const totalCount = await this.countEntries(board);
    switch (request.kind) {
      case 'first':
      case 'offset': {
        const skip = request.kind === 'offset' ? request.skip : 0;
        const rows = await this.rows(this.sql.offsetPage, [
          board.spaceId,
          board.sprintId,
          size + 1,
          skip,
        ]);
        return this.forwardPage(rows, size, skip + 1, totalCount, skip > 0 && totalCount > 0);
      }
      case 'after': {
        const rows = await this.rows(
          this.sql.pageAfter,
          keysetPageParams(board, request.key, size + 1),
        );
        const firstRank =
          rows.length > 0 ? (await this.countAhead(board, rows[0])) + 1 : totalCount + 1;
        return this.forwardPage(rows, size, firstRank, totalCount, totalCount > 0);
      }
      case 'before': {
        const rows = await this.rows(
          this.sql.pageBefore,
          keysetPageParams(board, request.key, size + 1),
        );
        const hasPreviousPage = rows.length > size;
        const entries = rows.slice(0, size).reverse();
        const firstRank = entries.length > 0 ? (await this.countAhead(board, entries[0])) + 1 : 1;
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
    return { ...row, rank: (await this.countAhead(board, row)) + 1 };
  }

  async countEntries(board: BoardRef): Promise<number> {
    const [row]: Array<Record<string, unknown>> = await this.reads.query(this.sql.countEntries, [
      board.spaceId,
      board.sprintId,
    ]);
    return row ? num(row.entryCount) : 0;
  }

  /** Entries strictly ahead of `key` in rank order. */
  private async countAhead(board: BoardRef, key: RankKey): Promise<number> {
    const [row]: Array<Record<string, unknown>> = await this.reads.query(
      this.sql.countAhead,
      countAheadParams(board, key),
    );
    return num(row.ahead);
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
