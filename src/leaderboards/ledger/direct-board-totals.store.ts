import type { EntityManager } from 'typeorm';
import { chunk, num, SqlDialect } from '../../storage/dialect/sql-dialect';
import { afterCommit } from '../../storage/transactions/commit-hooks';
import type { EntryState } from '../changes/board-change-log';
import type { BoardRef } from '../ranking/ranking';
import { ENTRY_COLUMNS } from '../ranking/rank-order-sql';
import { RankBucketSql } from '../rank-buckets/rank-bucket-sql';
import {
  Bucket,
  bucketsOf,
  EntryMove,
  moveCounts,
  RANK_BUCKETS,
  runAsync,
} from '../rank-buckets/rank-buckets';
import { RankBucketTidier } from '../rank-buckets/rank-bucket-tidier';
import { BoardTotalsStore, EntryDelta } from './board-totals.store';
import { query } from '../../storage/statements';

const IN_CHUNK = BoardTotalsStore.MAX_CHANGES_PER_ADD;

/**
 * Board totals written straight into board_entries, one upsert per part of a batch: for databases
 * whose writers run at once (the servers: MySQL/MariaDB, PostgreSQL), where board_entries is
 * always current. Built by the leaderboards module's factory.
 */
export class DirectBoardTotalsStore extends BoardTotalsStore {
  private readonly buckets: RankBucketSql;
  private readonly tidier: RankBucketTidier;
  /** Per transaction and board, the entry moves its rank buckets have yet to take. */
  private readonly moves = new WeakMap<EntityManager, Map<string, EntryMove[]>>();
  /** Per board, its bucket bounds as of a layout (see {@link boardWritten}). */
  private readonly layouts = new Map<string, KnownLayout>();
  constructor(private readonly dialect: SqlDialect) {
    super();
    this.buckets = new RankBucketSql(dialect);
    this.tidier = new RankBucketTidier(this.buckets);
  }

  /**
   * One upsert, which also keeps each entry's reached_at as it found it (prior_reached_at), and
   * answers the entries as they now stand: their old rank keys follow (points less the delta,
   * the prior reached_at), for the rank buckets, with no statement more.
   */
  async add(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
  ): Promise<EntryState[]> {
    const { spaceId, sprintId } = board;
    const upsert = this.dialect.upsert(
      'board_entries',
      ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at', 'prior_reached_at'],
      ['space_id', 'sprint_id', 'address_key'],
      { prior_reached_at: { priorOf: 'reached_at' }, points: 'add', reached_at: 'max' },
      changes.length,
    );
    const values = changes.flatMap((c) => [
      spaceId,
      sprintId,
      c.addressKey,
      c.delta,
      c.reachedAt,
      0,
    ]);
    let rows: Array<Record<string, unknown>>;
    if (this.dialect.upsertReturning) {
      rows = await query(manager, `${upsert} RETURNING ${ENTRY_COLUMNS}, ${PRIOR}`, values);
    } else {
      await query(manager, upsert, values);
      rows = await this.select(
        manager,
        board,
        changes.map((c) => c.addressKey),
        `, ${PRIOR}`,
      );
    }
    const byAddress = new Map(rows.map((row) => [String(row.addressKey), row]));
    const moves = this.movesOf(manager, board);
    return changes.map(({ addressKey, delta }) => {
      const row = byAddress.get(addressKey)!;
      const state = {
        spaceId,
        sprintId,
        addressKey,
        points: num(row.points),
        reachedAt: num(row.reachedAt),
      };
      // A new entry was inserted at the delta: it was at 0 points before, off the board.
      const before = {
        addressKey,
        points: state.points - delta,
        reachedAt: num(row.priorReachedAt),
      };
      moves.push({
        before: before.points > 0 ? before : null,
        after: state.points > 0 ? state : null,
      });
      return state;
    });
  }

  /**
   * Moves the board's bucket counts by the batch's entries, at the end of the batch as its entry
   * counter is (the board's writers queue there, not earlier).
   *
   * The board's row in `boards` is the buckets' lock: the batch holds it exclusively from here
   * (or from its counter's write just before) to its commit, as splits, drops and the head's making do, each bumping boards.bucket_layout, so the layout
   * stays as read. (A batch that adds no entry took no lock here before the buckets; a shared
   * lock for it would be upgraded when the same transaction later adds an entry to the board,
   * which deadlocks with another sharer.) When the layout is one this instance knows, the bounds
   * it keeps are the board's, and the batch writes only the counts it moves: no read of the
   * buckets. Else the buckets are read (locked, in rank order) and kept once the transaction
   * commits (one that rolls back may have read bounds it made itself). A board without buckets
   * under RANK_BUCKETS.fromEntries is left so; the first write that finds it larger makes its
   * head bucket. Splits and drops wait for the commit (RankBucketTidier), on the counts this
   * instance knows, which are read again every {@link COUNTS_FRESH_MS} for the other instances'
   * writes.
   */
  async boardWritten(manager: EntityManager, board: BoardRef): Promise<void> {
    const byBoard = this.moves.get(manager);
    const key = boardKey(board);
    const moves = byBoard?.get(key);
    if (!moves) return;
    byBoard!.delete(key);
    const params = [board.spaceId, board.sprintId];
    const run = (sql: string, values: unknown[]) => query(manager, sql, values);
    // Entries that were off the board and stay off move no count. When all are (a board with no
    // row in boards has no entry on it), no lock either: a locking read of a missing row locks
    // its gap, and two first writers inserting it would deadlock.
    if (moves.every((move) => !move.before && !move.after)) return;
    // Written just before, by this batch when it changed the entry count: the lock is held then.
    const [held] = await run(`${BOARD_STATE}${this.dialect.lockRows('update')}`, params);
    if (!held) return;
    const layout = num(held.layout);
    // This transaction's entries included, its counter written just before.
    const entries = num(held.entryCount);
    const known = this.layouts.get(key);
    let buckets: Bucket[];
    if (layout === 0) {
      // Never had buckets: nothing to read (a locking read of none locks other boards' gap).
      buckets = [];
    } else if (known && known.layout === layout && Date.now() - known.readAt < COUNTS_FRESH_MS) {
      buckets = known.buckets;
      // Most recently used last: the first is the one to forget.
      this.layouts.delete(key);
      this.layouts.set(key, known);
    } else {
      // Locked in rank order, exclusively: a shared lock would deadlock with another writer's
      // count update of the same rows.
      const latest = this.buckets.allBuckets(board, true);
      buckets = bucketsOf(await run(latest.sql, latest.params));
      const read: KnownLayout = { layout, buckets, readAt: Date.now() };
      afterCommit(manager, () => this.keep(key, read));
    }
    if (buckets.length === 0 && entries < RANK_BUCKETS.fromEntries) return;
    function* entriesNow() {
      return entries;
    }
    const moved: Array<[number, number]> = [];
    const untidy = await runAsync(
      moveCounts(this.buckets, board, moves, {
        entriesNow,
        rowsPerStatement: IN_CHUNK,
        buckets,
        moved: (at, delta) => moved.push([at, delta]),
      }),
      run,
    );
    // The counts kept move once the moves are stored (a rolled-back batch moved nothing). A head
    // made here is a new layout, which the next batch reads.
    afterCommit(manager, () => {
      if (this.layouts.get(key)?.buckets !== buckets) return;
      for (const [at, delta] of moved) buckets[at].count += delta;
    });
    if (untidy.oversized.length > 0 || untidy.empty.length > 0)
      afterCommit(manager, () => this.tidier.schedule(manager.connection, board));
  }

  /**
   * Keeps a committed layout's bounds, unless a later layout of the board is kept already; past
   * KEPT_BOARDS, forgets the least recently used.
   */
  private keep(key: string, read: KnownLayout): void {
    const known = this.layouts.get(key);
    if (known && known.layout > read.layout) return;
    this.layouts.delete(key);
    this.layouts.set(key, read);
    if (this.layouts.size > KEPT_BOARDS) this.layouts.delete(this.layouts.keys().next().value!);
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
    this.layouts.delete(boardKey(board));
  }

  settle(): Promise<void> {
    return Promise.resolve();
  }

  /** Board entries are always current here; waits for the splits scheduled so far (a CLI exits). */
  settleAll(): Promise<void> {
    return this.tidier.idle();
  }

  settledSnapshot<S>(_board: BoardRef, open: () => Promise<S>): Promise<S> {
    return open();
  }

  private movesOf(manager: EntityManager, board: BoardRef): EntryMove[] {
    let byBoard = this.moves.get(manager);
    if (!byBoard) this.moves.set(manager, (byBoard = new Map<string, EntryMove[]>()));
    const key = boardKey(board);
    let moves = byBoard.get(key);
    if (!moves) byBoard.set(key, (moves = []));
    return moves;
  }

  /**
   * One board's entries of these addresses, through the primary key (left to themselves, both
   * databases read a long IN list through the rank index, a scan of the board), locked.
   */
  private select(
    manager: EntityManager,
    board: BoardRef,
    addressKeys: readonly string[],
    moreColumns = '',
  ): Promise<Array<Record<string, unknown>>> {
    return query(
      manager,
      `SELECT ${ENTRY_COLUMNS}${moreColumns} FROM ${this.dialect.byPrimaryKey('board_entries')}
       WHERE space_id = ? AND sprint_id = ? AND address_key IN (${addressKeys.map(() => '?').join(', ')})
       ${this.dialect.lockRows('update')}`,
      [board.spaceId, board.sprintId, ...addressKeys],
    );
  }
}

/** A board's bucket bounds as of one layout, with their counts as this instance last knew them. */
interface KnownLayout {
  layout: number;
  buckets: Bucket[];
  readAt: number;
}

/** How long the counts kept with a layout serve to decide splits before they are read again. */
const COUNTS_FRESH_MS = 30_000;
/** Boards whose layouts an instance keeps: the most recently used. */
const KEPT_BOARDS = 256;

const PRIOR = 'prior_reached_at AS priorReachedAt';

const BOARD_STATE =
  'SELECT entry_count AS entryCount, bucket_layout AS layout FROM boards WHERE space_id = ? AND sprint_id = ?';

const boardKey = (board: BoardRef) => `${board.spaceId}/${board.sprintId}`;
