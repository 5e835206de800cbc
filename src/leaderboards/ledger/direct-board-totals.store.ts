import type { EntityManager } from 'typeorm';
import { chunk, num, SqlDialect } from '../../storage/dialect/sql-dialect';
import { afterCommit } from '../../storage/transactions/commit-hooks';
import type { EntryState } from '../changes/board-change-log';
import type { BoardRef } from '../ranking/ranking';
import { RankBucketSql } from '../rank-buckets/rank-bucket-sql';
import { bucketsOf, EntryMove, moveCounts, runAsync } from '../rank-buckets/rank-buckets';
import { RankBucketTidier } from '../rank-buckets/rank-bucket-tidier';
import { BoardTotalsStore, EntryDelta } from './board-totals.store';

const ENTRY_COLUMNS = 'address_key AS addressKey, points, reached_at AS reachedAt';
const IN_CHUNK = BoardTotalsStore.MAX_CHANGES_PER_ADD;

/**
 * Board totals written straight into board_entries, one upsert per part of a batch: for databases
 * whose writers run at once (MySQL/MariaDB), where board_entries is always current. Built by the
 * leaderboards module's factory.
 */
export class DirectBoardTotalsStore extends BoardTotalsStore {
  private readonly buckets: RankBucketSql;
  private readonly tidier: RankBucketTidier;
  /** Per transaction and board, the entry moves its rank buckets have yet to take. */
  private readonly moves = new WeakMap<EntityManager, Map<string, BoardMoves>>();

  constructor(private readonly dialect: SqlDialect) {
    super();
    this.buckets = new RankBucketSql(dialect);
    this.tidier = new RankBucketTidier(this.buckets);
  }

  /**
   * Two upserts: the first adds nothing, creating the missing entries at 0 and locking them all
   * (record locks, no gap locks), and answers each entry as it was, for the rank buckets; the
   * second adds the changes.
   */
  async add(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
  ): Promise<EntryState[]> {
    const { spaceId, sprintId } = board;
    const before = await this.upsert(
      manager,
      board,
      changes.map((c) => ({ ...c, delta: 0, reachedAt: 0 })),
    );
    const after = await this.upsert(manager, board, changes);
    const moves = this.movesOf(manager, board);
    return changes.map(({ addressKey }) => {
      const was = before.get(addressKey)!;
      const row = after.get(addressKey)!;
      const state = {
        spaceId,
        sprintId,
        addressKey,
        points: num(row.points),
        reachedAt: num(row.reachedAt),
      };
      const old = { addressKey, points: num(was.points), reachedAt: num(was.reachedAt) };
      moves.push({ before: old.points > 0 ? old : null, after: state.points > 0 ? state : null });
      return state;
    });
  }

  /**
   * Moves the board's bucket counts by the batch's entries. A batch that changes the board's entry
   * count holds its counter row exclusively from here (it writes it next): writers of the board
   * take it in turn, and the buckets are read locked, the latest. Otherwise it holds the row
   * shared, as splits take it exclusively: when the layout its snapshot shows is the current one,
   * the bounds it read are, and writers that move no entry out of its bucket write nothing and
   * wait for nobody. Splits and drops wait for the commit (RankBucketTidier).
   */
  async boardWritten(manager: EntityManager, board: BoardRef): Promise<void> {
    const byBoard = this.moves.get(manager);
    const key = boardKey(board);
    const pending = byBoard?.get(key);
    if (!pending) return;
    byBoard!.delete(key);
    const params = [board.spaceId, board.sprintId];
    const query = (sql: string, values: unknown[]) =>
      manager.query<Array<Record<string, unknown>>>(sql, values);
    const net = pending.moves.reduce((sum, m) => sum + (m.after ? 1 : 0) - (m.before ? 1 : 0), 0);
    const [seen] = await query(BOARD_STATE, params);
    let buckets = bucketsOf(await query(this.buckets.allBuckets(board, false).sql, params));
    const exclusive = net !== 0 || buckets.length === 0;
    if (exclusive) {
      await query(
        this.dialect.upsert(
          'boards',
          ['space_id', 'sprint_id', 'entry_count'],
          ['space_id', 'sprint_id'],
          { entry_count: 'add' },
          1,
        ),
        [...params, 0],
      );
    }
    const [held] = await query(
      `${BOARD_STATE}${this.dialect.lockRows(exclusive ? 'update' : 'share')}`,
      params,
    );
    if (exclusive || num(held?.layout) !== num(seen?.layout)) {
      const latest = this.buckets.allBuckets(board, true);
      buckets = bucketsOf(await query(latest.sql, latest.params));
    }
    // The committed count (this batch's is written after this), for a board without buckets.
    const committed = num(held?.entryCount ?? 0);
    function* entriesNow() {
      return committed + net;
    }
    const untidy = await runAsync(
      moveCounts(this.buckets, board, pending.moves, {
        lock: true,
        entriesNow,
        rowsPerStatement: IN_CHUNK,
        buckets: buckets.length > 0 ? buckets : undefined,
      }),
      query,
    );
    if (untidy.oversized.length > 0 || untidy.empty.length > 0)
      afterCommit(manager, () => this.tidier.schedule(manager.connection, board));
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

  /** Resolves once the splits scheduled after commits have ended (for shutdown and specs). */
  bucketsTidied(): Promise<void> {
    return this.tidier.idle();
  }

  forget(manager: EntityManager, board: BoardRef): void {
    // The rebuild makes the board's buckets again from its entries.
    this.moves.get(manager)?.delete(boardKey(board));
  }

  settle(): Promise<void> {
    return Promise.resolve();
  }

  settleAll(): Promise<void> {
    return Promise.resolve();
  }

  settledSnapshot<S>(_board: BoardRef, open: () => Promise<S>): Promise<S> {
    return open();
  }

  /** Adds the changes to their entries, creating them; answers the entries by address. */
  private async upsert(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
  ): Promise<Map<string, Record<string, unknown>>> {
    const upsert = this.dialect.upsert(
      'board_entries',
      ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at'],
      ['space_id', 'sprint_id', 'address_key'],
      { points: 'add', reached_at: 'max' },
      changes.length,
    );
    const values = changes.flatMap((c) => [
      board.spaceId,
      board.sprintId,
      c.addressKey,
      c.delta,
      c.reachedAt,
    ]);
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
    return new Map(rows.map((row) => [String(row.addressKey), row]));
  }

  private movesOf(manager: EntityManager, board: BoardRef): EntryMove[] {
    let byBoard = this.moves.get(manager);
    if (!byBoard) this.moves.set(manager, (byBoard = new Map<string, BoardMoves>()));
    const key = boardKey(board);
    let pending = byBoard.get(key);
    if (!pending) byBoard.set(key, (pending = { moves: [] }));
    return pending.moves;
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

interface BoardMoves {
  moves: EntryMove[];
}

const BOARD_STATE =
  'SELECT entry_count AS entryCount, bucket_layout AS layout FROM boards WHERE space_id = ? AND sprint_id = ?';

const boardKey = (board: BoardRef) => `${board.spaceId}/${board.sprintId}`;
