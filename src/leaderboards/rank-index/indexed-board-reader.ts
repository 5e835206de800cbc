import { Injectable } from '@nestjs/common';
import { BoardPage, BoardReader, RankedEntry, rankEntries } from '../read/board-reader';
import type { PageRequest } from '../paging/page-request';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { SqlBoardReader } from '../read/sql-board-reader';
import type { BoardIndex } from './board-index';
import { RankIndexService } from './rank-index.service';

/**
 * Pages, ranks and totalCount from the board's in-process rank index: O(log n + page size) at any
 * depth. While the index is loading (or turned off), the same answers come from SQL.
 */
@Injectable()
export class IndexedBoardReader extends BoardReader {
  constructor(
    private readonly indexes: RankIndexService,
    private readonly sql: SqlBoardReader,
  ) {
    super();
  }

  readPage(board: BoardRef, request: PageRequest): Promise<BoardPage> {
    const index = this.indexes.indexFor(board);
    return index ? Promise.resolve(pageOf(index, request)) : this.sql.readPage(board, request);
  }

  findEntry(board: BoardRef, addressKey: string): Promise<RankedEntry | null> {
    const index = this.indexes.indexFor(board);
    return index ? Promise.resolve(index.get(addressKey)) : this.sql.findEntry(board, addressKey);
  }

  countEntries(board: BoardRef): Promise<number> {
    const index = this.indexes.indexFor(board);
    return index ? Promise.resolve(index.size) : this.sql.countEntries(board);
  }

  countAhead(board: BoardRef, key: RankKey): Promise<number> {
    const index = this.indexes.indexFor(board);
    return index ? Promise.resolve(index.countAhead(key)) : this.sql.countAhead(board, key);
  }

  /**
   * The entries from SQL in one statement, then a rank for each board the address is on: only
   * those boards are asked for (and so loaded into) an index, not every board of the space.
   */
  async findEntries(
    spaceId: number,
    sprintIds: readonly number[],
    addressKey: string,
  ): Promise<Map<number, RankedEntry>> {
    const entries = await this.sql.entriesOf(spaceId, sprintIds, addressKey);
    return rankEntries(entries, (sprintId, key) => this.countAhead({ spaceId, sprintId }, key));
  }
}

/** A page with the same edges as the SQL reader's (docs/api.md, Paging). */
export function pageOf(index: BoardIndex, request: PageRequest): BoardPage {
  const totalCount = index.size;
  if (request.kind === 'before') {
    const end = index.countAhead(request.key);
    const start = Math.max(0, end - request.size);
    const entries = index.slice(start, end - start);
    const lastRank = entries.length > 0 ? entries[entries.length - 1].rank : 0;
    return {
      entries,
      totalCount,
      hasPreviousPage: start > 0,
      hasNextPage: entries.length > 0 && lastRank < totalCount,
    };
  }
  const start =
    request.kind === 'first'
      ? 0
      : request.kind === 'offset'
        ? request.skip
        : index.countThrough(request.key);
  const entries = index.slice(start, request.size);
  const emptyHasPrevious = request.kind === 'after' ? totalCount > 0 : start > 0 && totalCount > 0;
  return {
    entries,
    totalCount,
    hasNextPage: start + entries.length < totalCount,
    hasPreviousPage: entries.length > 0 ? start > 0 : emptyHasPrevious,
  };
}
