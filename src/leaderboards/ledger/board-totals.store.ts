import type { EntityManager } from 'typeorm';
import type { EntryState } from '../changes/board-change-log';
import type { BoardRef } from '../ranking/ranking';

/** A batch's change to one entry of a board: adds `delta`; reachedAt becomes at least `reachedAt`. */
export interface EntryDelta {
  addressKey: string;
  delta: number;
  reachedAt: number;
}

/**
 * Where the points totals of the boards (board_entries) are kept and read by the write path. One
 * implementation is chosen at start: writes straight into board_entries where writers run at once,
 * or a backlog that folds them in later where one writer holds the database (SQLite).
 */
export abstract class BoardTotalsStore {
  /** Changes one call of {@link add} takes at most: one statement's worth on every database. */
  static readonly MAX_CHANGES_PER_ADD = 500;

  /**
   * Adds each change (all of one board, in address order, at most {@link MAX_CHANGES_PER_ADD}) to
   * its total, creating the entry, and answers the entries as they now stand, in `changes` order. `asReset`: the batch rewrites
   * much of the board, and will announce it as a reset rather than entry by entry.
   */
  abstract add(
    manager: EntityManager,
    board: BoardRef,
    changes: readonly EntryDelta[],
    asReset: boolean,
  ): Promise<EntryState[]>;

  /**
   * The stored totals of these addresses on one board, locked for the transaction where writers
   * lock rows; an address with no entry is absent.
   */
  abstract totals(
    manager: EntityManager,
    board: BoardRef,
    addressKeys: readonly string[],
  ): Promise<Map<string, number>>;

  /**
   * After every {@link add} of a batch to the board and its entry counter's write (so with the
   * same lock order): brings the board's rank buckets up to its entries where they were written at
   * once (see RankBuckets).
   */
  abstract boardWritten(manager: EntityManager, board: BoardRef): Promise<void>;

  /** The board is about to be rebuilt from the ledger inside this transaction. */
  abstract forget(manager: EntityManager, board: BoardRef): void;

  /** Resolves once board_entries holds every change of the board committed before the call. */
  abstract settle(board: BoardRef): Promise<void>;

  /** {@link settle} for every board (a command-line process, before it exits). */
  abstract settleAll(): Promise<void>;

  /**
   * Opens a read snapshot (`open`) in which board_entries holds every change of the board the
   * snapshot sees: for reading a whole board as of one moment. Where totals are written straight
   * into board_entries that is any snapshot; the backlog folds the board and takes the snapshot
   * right after that commit, before its writer commits anything else.
   */
  abstract settledSnapshot<S>(board: BoardRef, open: () => Promise<S>): Promise<S>;

  /**
   * Board entries changed but not yet in board_entries (SQLite's backlog), for metrics; undefined
   * where every change is written at once.
   */
  unfoldedEntries(): number | undefined {
    return undefined;
  }
}
