import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import { num } from '../../storage/dialect/sql-dialect';
import { query } from '../../storage/statements';
import type { EntryState } from '../changes/board-change-log';
import { BoardTotalsStore, EntryDelta } from '../ledger/board-totals.store';
import {
  PrepareSync,
  TransactionObserver,
  TransactionRunner,
} from '../../storage/transactions/transaction-runner';
import { BoardBacklog } from './board-backlog';
import type { BoardRef } from '../ranking/ranking';
import { afterCommit, commitRightAfter } from '../../storage/transactions/commit-hooks';

/** After this long without a commit, the writer folds the board with the most dirty entries. */
const IDLE_FOLD_MS = 1_000;

/**
 * The board totals store where one writer holds the database and runs statements synchronously
 * (SQLite; built by the leaderboards module's factory, which makes it an observer of the runner,
 * see TransactionRunner.syncStatements): keeps this process's
 * {@link BoardBacklog} in step with the writer's transactions, and folds it into board_entries:
 * part of a board at a transaction's start when one is due, part of one a second while the writer
 * is idle, and a whole board for its readers ({@link settle}).
 */
export class BoardBacklogService
  extends BoardTotalsStore
  implements TransactionObserver, BeforeApplicationShutdown
{
  private readonly logger = new Logger(BoardBacklogService.name);
  private readonly backlog: BoardBacklog;
  private idleTimer?: NodeJS.Timeout;
  private idleFolding?: Promise<void>;
  private lastCommit = 0;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
    dialect: SqlDialect,
  ) {
    super();
    // Fail at start, not at the first write, on a runner it cannot run with.
    if (!transactions.singleWriter)
      throw new Error('The board backlog runs where one writer holds the database only');
    this.backlog = new BoardBacklog(dialect);
  }

  override unfoldedEntries(): number {
    return this.backlog.dirty;
  }

  /**
   * In board_entries at once only when `asReset`; otherwise by the board_changes rows the caller
   * appends, folded in later.
   */
  add(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
    asReset: boolean,
  ): Promise<EntryState[]> {
    return Promise.resolve(this.backlog.add(this.native(manager), board, changes, asReset));
  }

  totals(
    manager: EntityManager,
    board: BoardRef,
    addressKeys: readonly string[],
  ): Promise<Map<string, number>> {
    const native = this.native(manager);
    const totals = new Map<string, number>();
    for (const addressKey of addressKeys) {
      const total = this.backlog.total(native, board, addressKey);
      if (total) totals.set(addressKey, total.points);
    }
    return Promise.resolve(totals);
  }

  /** Nothing to do here: the buckets move where board_entries is written, in the fold. */
  boardWritten(): Promise<void> {
    return Promise.resolve();
  }

  forget(manager: EntityManager, board: BoardRef): void {
    this.backlog.forget(this.native(manager), board);
  }

  begun(manager: EntityManager): void {
    const native = this.native(manager);
    this.backlog.begin(native);
    this.backlog.foldDue(native);
  }

  committing(manager: EntityManager): void {
    this.backlog.committing(this.native(manager));
  }

  committed(): void {
    this.backlog.committed();
    this.lastCommit = Date.now();
    this.scheduleIdleFold(IDLE_FOLD_MS);
  }

  rolledBack(): void {
    this.backlog.rolledBack();
  }

  /**
   * Resolves once board_entries holds every change of the board committed before the call: for
   * readers of its rows (SQL pages, loading a rank index). A point read when nothing is unfolded.
   */
  async settle(board: BoardRef): Promise<void> {
    const [row] = await query<{ since: unknown }>(
      this.dataSource,
      'SELECT unfolded_since AS since FROM boards WHERE space_id = ? AND sprint_id = ?',
      [board.spaceId, board.sprintId],
    );
    if (row?.since === null || row?.since === undefined) return;
    await this.transactions.run((manager) => {
      this.backlog.fold(this.native(manager), board);
      return Promise.resolve();
    });
  }

  /**
   * Folds the board in a transaction of the writer that ends with the fold, and opens the snapshot
   * in its commit hook: the runner settles a group's units (and runs their hooks) before it begins
   * the next transaction, and SQLite's snapshot is taken synchronously, so it sees the board folded. Another process
   * writing the database meanwhile could still leave changes unfolded: callers check.
   */
  async settledSnapshot<S>(board: BoardRef, open: () => Promise<S>): Promise<S> {
    let opened: Promise<S> | undefined;
    await this.transactions.run((manager) => {
      this.backlog.fold(this.native(manager), board);
      // Writes of units queued behind this one would leave the board unfolded in the snapshot.
      commitRightAfter(manager);
      afterCommit(manager, () => {
        opened = open();
        // Rejections are the caller's, below; none may go unhandled meanwhile.
        opened.catch(() => undefined);
      });
      return Promise.resolve();
    });
    if (!opened) throw new Error('The board was folded but its snapshot was not opened');
    return opened;
  }

  /** Folds every board with unfolded changes (a command line process, before it exits). */
  async settleAll(): Promise<void> {
    const rows = await query(
      this.dataSource,
      'SELECT space_id AS spaceId, sprint_id AS sprintId FROM boards WHERE unfolded_since IS NOT NULL',
    );
    for (const row of rows) {
      await this.settle({ spaceId: num(row.spaceId), sprintId: num(row.sprintId) });
    }
  }

  /** The writer connection's synchronous statements (see TransactionRunner.syncStatements). */
  private native(manager: EntityManager): PrepareSync {
    const native = this.transactions.syncStatements(manager);
    if (!native) throw new Error("The board backlog needs the single writer's statements");
    return native;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.idleFolding;
  }

  private scheduleIdleFold(delay: number): void {
    if (this.closed || this.idleTimer || this.idleFolding || this.backlog.dirty === 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      const quietFor = Date.now() - this.lastCommit;
      if (quietFor < IDLE_FOLD_MS) return this.scheduleIdleFold(IDLE_FOLD_MS - quietFor);
      if (this.closed) return;
      this.idleFolding = this.transactions
        .run((manager) => {
          this.backlog.foldMostDirty(this.native(manager));
          return Promise.resolve();
        })
        .catch((error: unknown) =>
          this.logger.warn(`Folding board changes failed: ${(error as Error).message}`),
        )
        .finally(() => {
          this.idleFolding = undefined;
          this.scheduleIdleFold(IDLE_FOLD_MS);
        });
    }, delay);
    this.idleTimer.unref();
  }
}
