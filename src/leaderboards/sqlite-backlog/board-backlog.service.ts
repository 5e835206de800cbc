import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { dialectOf, num } from '../../storage/dialect/sql-dialect';
import { nativeSqlite, PrepareNative } from '../../storage/sqlite/sqlite-native';
import {
  TransactionObserver,
  TransactionRunner,
} from '../../storage/transactions/transaction-runner';
import { BoardBacklog } from './board-backlog';
import type { BoardRef } from '../ranking/ranking';

/** After this long without a commit, the writer folds the board with the most dirty entries. */
const IDLE_FOLD_MS = 1_000;

/**
 * SQLite: keeps this process's {@link BoardBacklog} in step with the writer's transactions, and
 * folds it into board_entries: part of a board at a transaction's start when one is due, part of
 * one a second while the writer is idle, and a whole board for its readers ({@link settle}).
 * MySQL/MariaDB write board_entries at once: nothing to do there.
 */
@Injectable()
export class BoardBacklogService implements TransactionObserver, BeforeApplicationShutdown {
  private readonly logger = new Logger(BoardBacklogService.name);
  private readonly backlog?: BoardBacklog;
  private idleTimer?: NodeJS.Timeout;
  private idleFolding?: Promise<void>;
  private lastCommit = 0;
  private closed = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
  ) {
    if (dialectOf(dataSource) !== 'sqlite') return;
    this.backlog = new BoardBacklog();
    transactions.observe(this);
  }

  /** SQLite: the backlog and the writer connection of this transaction; undefined elsewhere. */
  writer(manager: EntityManager): { backlog: BoardBacklog; native: PrepareNative } | undefined {
    const backlog = this.backlog;
    const native = backlog && nativeSqlite(manager);
    return backlog && native ? { backlog, native } : undefined;
  }

  begun(manager: EntityManager): void {
    const native = nativeSqlite(manager)!;
    this.backlog!.begin(native);
    this.backlog!.foldDue(native);
  }

  committing(manager: EntityManager): void {
    this.backlog!.committing(nativeSqlite(manager)!);
  }

  committed(): void {
    this.backlog!.committed();
    this.lastCommit = Date.now();
    this.scheduleIdleFold(IDLE_FOLD_MS);
  }

  rolledBack(): void {
    this.backlog!.rolledBack();
  }

  /**
   * Resolves once board_entries holds every change of the board committed before the call: for
   * readers of its rows (SQL pages, loading a rank index). A point read when nothing is unfolded.
   */
  async settle(board: BoardRef): Promise<void> {
    if (!this.backlog) return;
    const [row]: Array<{ since: unknown }> = await this.dataSource.query(
      'SELECT unfolded_since AS since FROM boards WHERE space_id = ? AND sprint_id = ?',
      [board.spaceId, board.sprintId],
    );
    if (row?.since === null || row?.since === undefined) return;
    await this.transactions.run((manager) => {
      this.backlog!.fold(nativeSqlite(manager)!, board);
      return Promise.resolve();
    });
  }

  /** Folds every board with unfolded changes (a command line process, before it exits). */
  async settleAll(): Promise<void> {
    if (!this.backlog) return;
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT space_id AS spaceId, sprint_id AS sprintId FROM boards WHERE unfolded_since IS NOT NULL',
    );
    for (const row of rows) {
      await this.settle({ spaceId: num(row.spaceId), sprintId: num(row.sprintId) });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    await this.idleFolding;
  }

  private scheduleIdleFold(delay: number): void {
    if (this.closed || this.idleTimer || this.idleFolding || this.backlog!.dirty === 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      const quietFor = Date.now() - this.lastCommit;
      if (quietFor < IDLE_FOLD_MS) return this.scheduleIdleFold(IDLE_FOLD_MS - quietFor);
      if (this.closed) return;
      this.idleFolding = this.transactions
        .run((manager) => {
          this.backlog!.foldMostDirty(nativeSqlite(manager)!);
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
