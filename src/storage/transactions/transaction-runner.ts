import type { EntityManager } from 'typeorm';
import type { WriteLoadHint } from './write-load';

export { afterCommit } from './commit-hooks';

/**
 * Told of each write transaction's life where one writer holds the database (see
 * TransactionRunner.observe), for state kept beside the database that must follow its commits
 * exactly. Every call is made on the writer connection, between the others' calls, in this order:
 * begun, then committing and committed, or rolledBack (from any point, also after a failed commit).
 */
export interface TransactionObserver {
  /** The transaction holds the write lock and nothing of it has run yet. May read and write. */
  begun(manager: EntityManager): void;
  /** Its last unit has run; the commit comes next. May read and write. */
  committing(manager: EntityManager): void;
  committed(): void;
  rolledBack(): void;
}

/** Hears of each commit before the unit's caller does (see ReadReplicas.noteCommit). */
export interface CommitListener {
  noteCommit(): void;
}

/** A statement prepared once on a single writer's connection, which runs synchronously. */
export interface SyncStatement {
  /** `changes`: the rows the statement inserted, updated or deleted. */
  run(...parameters: unknown[]): { changes: number };
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  /** Rows one at a time, as the database steps: for reads too large to hold at once. */
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

/** Prepares a statement of house SQL on the writer's connection (once per text: keep it fixed). */
export type PrepareSync = (sql: string) => SyncStatement;

/**
 * Runs write transactions: each unit either commits whole or leaves nothing behind, and a retry
 * re-runs the whole unit, which re-reads what it needs. The storage module provides the runner
 * that fits its database (see transactionRunnerProvider).
 */
export abstract class TransactionRunner {
  /**
   * Whether every write of this process goes through one connection, one transaction at a time
   * (SQLite): units then run one after another, and observers see each transaction.
   */
  abstract readonly singleWriter: boolean;

  abstract run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T>;

  /** Tells `observer` of every write transaction from now on, where there is a single writer. */
  abstract observe(observer: TransactionObserver): void;

  /** The load the caller expects (see WriteLoadHint); ignored where units never share commits. */
  abstract useLoadHint(hint: WriteLoadHint): void;

  /**
   * Where one writer holds the database (SQLite): its connection's statements, run synchronously
   * inside the transaction of `manager` (one of this runner's). A unit that writes row by row
   * saves a promise per row with them. Undefined elsewhere.
   */
  syncStatements(manager: EntityManager): PrepareSync | undefined {
    void manager;
    return undefined;
  }
}
