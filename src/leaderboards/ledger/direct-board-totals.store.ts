import type { EntityManager } from 'typeorm';
import { chunk, num, SqlDialect } from '../../storage/dialect/sql-dialect';
import type { EntryState } from '../changes/board-change-log';
import type { BoardRef } from '../ranking/ranking';
import { BoardTotalsStore, EntryDelta } from './board-totals.store';

const ENTRY_COLUMNS = 'address_key AS addressKey, points, reached_at AS reachedAt';
const IN_CHUNK = BoardTotalsStore.MAX_CHANGES_PER_ADD;

/**
 * Board totals written straight into board_entries, one upsert per part of a batch: for databases
 * whose writers run at once (MySQL/MariaDB), where board_entries is always current. Built by the
 * leaderboards module's factory.
 */
export class DirectBoardTotalsStore extends BoardTotalsStore {
  constructor(private readonly dialect: SqlDialect) {
    super();
  }

  async add(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
  ): Promise<EntryState[]> {
    const { spaceId, sprintId } = board;
    const upsert = this.dialect.upsert(
      'board_entries',
      ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at'],
      ['space_id', 'sprint_id', 'address_key'],
      { points: 'add', reached_at: 'max' },
      changes.length,
    );
    const values = changes.flatMap((c) => [spaceId, sprintId, c.addressKey, c.delta, c.reachedAt]);
    let rows: Array<Record<string, unknown>>;
    if (this.dialect.upsertReturning) {
      rows = await manager.query(`${upsert} RETURNING ${ENTRY_COLUMNS}`, values);
    } else {
      await manager.query(upsert, values);
      rows = await this.select(
        manager,
        board,
        changes.map((c) => c.addressKey),
      );
    }
    const byAddress = new Map(rows.map((row) => [String(row.addressKey), row]));
    return changes.map(({ addressKey }) => {
      const row = byAddress.get(addressKey)!;
      return {
        spaceId,
        sprintId,
        addressKey,
        points: num(row.points),
        reachedAt: num(row.reachedAt),
      };
    });
  }

  async totals(
    manager: EntityManager,
    board: BoardRef,
    addressKeys: readonly string[],
  ): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    for (const part of chunk(addressKeys, IN_CHUNK)) {
      for (const row of await this.select(manager, board, part)) {
        totals.set(String(row.addressKey), num(row.points));
      }
    }
    return totals;
  }

  forget(): void {}

  settle(): Promise<void> {
    return Promise.resolve();
  }

  settleAll(): Promise<void> {
    return Promise.resolve();
  }

  settledSnapshot<S>(_board: BoardRef, open: () => Promise<S>): Promise<S> {
    return open();
  }

  /**
   * One board's entries of these addresses, through the primary key (left to themselves, both
   * databases read a long IN list through the rank index, a scan of the board), locked.
   */
  private select(
    manager: EntityManager,
    board: BoardRef,
    addressKeys: readonly string[],
  ): Promise<Array<Record<string, unknown>>> {
    return manager.query(
      `SELECT ${ENTRY_COLUMNS} FROM ${this.dialect.byPrimaryKey('board_entries')}
       WHERE space_id = ? AND sprint_id = ? AND address_key IN (${addressKeys.map(() => '?').join(', ')})
       ${this.dialect.lockRows('update')}`,
      [board.spaceId, board.sprintId, ...addressKeys],
    );
  }
}
