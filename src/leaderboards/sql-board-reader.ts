import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { num } from '../storage/sql-dialect';
import { BoardPage, BoardReader, RankedEntry } from './board-reader';
import type { PageRequest } from './page-request';
import type { BoardRef, RankKey } from './ranking';

interface EntryRow {
  addressKey: string;
  points: number | string;
  reachedAt: number | string;
}

const COLUMNS = 'address_key AS addressKey, points, reached_at AS reachedAt';
const ON_BOARD = 'space_id = ? AND sprint_id = ? AND points > 0';
const FORWARD = 'points DESC, reached_at ASC, address_key ASC';
const BACKWARD = 'points ASC, reached_at DESC, address_key DESC';
/** The same orders over the union's output columns. */
const FORWARD_OUT = 'points DESC, reachedAt ASC, addressKey ASC';
const BACKWARD_OUT = 'points ASC, reachedAt DESC, addressKey DESC';

/**
 * Keyset paging in SQL over the index (space_id, sprint_id, points DESC, reached_at, address_key).
 * The "after key" predicate is written as a UNION ALL of three range scans, each an index range
 * that stops after `limit` rows: SQLite turns the equivalent OR into a scan, at any depth.
 *
 * Ranks are counted: rank = entries strictly ahead + 1, so a page far down the board costs a
 * count over the entries ahead of it (O(depth)). That is the known cost this seam exists to
 * remove. totalCount comes from the `boards` counter kept by the ledger, not from COUNT(*).
 */
@Injectable()
export class SqlBoardReader extends BoardReader {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
  }

  async readPage(board: BoardRef, request: PageRequest): Promise<BoardPage> {
    const size = request.size;
    const totalCount = await this.countEntries(board);
    switch (request.kind) {
      case 'first':
      case 'offset': {
        const skip = request.kind === 'offset' ? request.skip : 0;
        const rows = await this.rows(
          `SELECT ${COLUMNS} FROM board_entries WHERE ${ON_BOARD} ORDER BY ${FORWARD} LIMIT ? OFFSET ?`,
          [board.spaceId, board.sprintId, size + 1, skip],
        );
        return this.forwardPage(rows, size, skip + 1, totalCount, skip > 0 && totalCount > 0);
      }
      case 'after': {
        const rows = await this.rows(
          this.keysetSql('after'),
          this.keysetParams(board, request.key, size + 1),
        );
        const firstRank =
          rows.length > 0 ? (await this.countAhead(board, rows[0])) + 1 : totalCount + 1;
        return this.forwardPage(rows, size, firstRank, totalCount, totalCount > 0);
      }
      case 'before': {
        const rows = await this.rows(
          this.keysetSql('before'),
          this.keysetParams(board, request.key, size + 1),
        );
        const hasPreviousPage = rows.length > size;
        const entries = rows.slice(0, size).reverse();
        const firstRank = entries.length > 0 ? (await this.countAhead(board, entries[0])) + 1 : 1;
        const ranked = entries.map((entry, i) => ({ ...entry, rank: firstRank + i }));
        const lastRank = ranked.length > 0 ? ranked[ranked.length - 1].rank : 0;
        return { entries: ranked, totalCount, hasPreviousPage, hasNextPage: lastRank < totalCount };
      }
    }
  }

  async findEntry(board: BoardRef, addressKey: string): Promise<RankedEntry | null> {
    const [row] = await this.rows(
      `SELECT ${COLUMNS} FROM board_entries WHERE ${ON_BOARD} AND address_key = ?`,
      [board.spaceId, board.sprintId, addressKey],
    );
    if (!row) return null;
    return { ...row, rank: (await this.countAhead(board, row)) + 1 };
  }

  async countEntries(board: BoardRef): Promise<number> {
    const [row]: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT entry_count AS entryCount FROM boards WHERE space_id = ? AND sprint_id = ?',
      [board.spaceId, board.sprintId],
    );
    return row ? num(row.entryCount) : 0;
  }

  /** Entries strictly ahead of `key` in rank order: three index range counts. */
  private async countAhead(board: BoardRef, key: RankKey): Promise<number> {
    const b = [board.spaceId, board.sprintId];
    const [row]: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT
        (SELECT COUNT(*) FROM board_entries WHERE space_id = ? AND sprint_id = ? AND points > ?)
      + (SELECT COUNT(*) FROM board_entries WHERE space_id = ? AND sprint_id = ? AND points = ? AND reached_at < ?)
      + (SELECT COUNT(*) FROM board_entries WHERE space_id = ? AND sprint_id = ? AND points = ? AND reached_at = ?
           AND address_key < ?) AS ahead`,
      [
        ...b,
        key.points,
        ...b,
        key.points,
        key.reachedAt,
        ...b,
        key.points,
        key.reachedAt,
        key.addressKey,
      ],
    );
    return num(row.ahead);
  }

  private keysetSql(direction: 'after' | 'before'): string {
    const forward = direction === 'after';
    const [lt, gt] = forward ? ['<', '>'] : ['>', '<'];
    const order = forward ? FORWARD : BACKWARD;
    const reachedOrder = forward
      ? 'reached_at ASC, address_key ASC'
      : 'reached_at DESC, address_key DESC';
    const addressOrder = forward ? 'address_key ASC' : 'address_key DESC';
    const branch = (predicate: string, branchOrder: string, alias: string) =>
      `SELECT * FROM (SELECT ${COLUMNS} FROM board_entries WHERE ${ON_BOARD} AND ${predicate}
         ORDER BY ${branchOrder} LIMIT ?) AS ${alias}`;
    return `SELECT * FROM (
        ${branch(`points ${lt} ?`, order, 'lower_points')}
        UNION ALL ${branch(`points = ? AND reached_at ${gt} ?`, reachedOrder, 'later_reached')}
        UNION ALL ${branch(`points = ? AND reached_at = ? AND address_key ${gt} ?`, addressOrder, 'next_address')}
      ) AS page ORDER BY ${forward ? FORWARD_OUT : BACKWARD_OUT} LIMIT ?`;
  }

  private keysetParams(board: BoardRef, key: RankKey, limit: number): unknown[] {
    const b = [board.spaceId, board.sprintId];
    return [
      ...b,
      key.points,
      limit,
      ...b,
      key.points,
      key.reachedAt,
      limit,
      ...b,
      key.points,
      key.reachedAt,
      key.addressKey,
      limit,
      limit,
    ];
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
    const raw: EntryRow[] = await this.dataSource.query(sql, parameters);
    return raw.map((row) => ({
      addressKey: row.addressKey,
      points: num(row.points),
      reachedAt: num(row.reachedAt),
    }));
  }
}
