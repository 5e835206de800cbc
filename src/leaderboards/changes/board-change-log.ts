import type { EntityManager } from 'typeorm';
import { insertRows } from '../../storage/insert-rows';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { query } from '../../storage/statements';

const COLUMNS = ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at', 'created_at'];

/** Change rows per native INSERT (an AUTOINCREMENT table; see insertRows). */
const NATIVE_ROWS_PER_STATEMENT = 64;

/** An entry as a transaction left it: its board, address, total and reachedAt. */
export interface EntryState extends RankKey {
  spaceId: number;
  sprintId: number;
}

/**
 * Appends to board_changes, in the writer's transaction: the entries it wrote, as it left them
 * (what a reader needs to set them, whatever it saw before), so the change and the write commit
 * together or not at all.
 */
export async function appendEntryChanges(
  manager: EntityManager,
  entries: readonly EntryState[],
): Promise<void> {
  const now = Date.now();
  await insertRows(
    manager,
    'board_changes',
    COLUMNS,
    entries,
    (e) => [e.spaceId, e.sprintId, e.addressKey, e.points, e.reachedAt, now],
    NATIVE_ROWS_PER_STATEMENT,
  );
}

/** Batches up to this many entries of a board are always announced entry by entry. */
export const RESET_MIN_CHANGES = 1000;

/**
 * Whether a batch changing `changes` of a board's `entries` is cheaper announced as a board reset
 * (every index reloads the board) than entry by entry (a change row written, then read and applied
 * by every instance); the factor 5 is their cost ratio per entry (docs/performance.md).
 */
export function announceAsReset(changes: number, entries: number): boolean {
  return changes > RESET_MIN_CHANGES && changes * 5 > entries;
}

/** Appends "this whole board changed": readers drop what they hold of it and load it again. */
export async function appendBoardReset(manager: EntityManager, board: BoardRef): Promise<void> {
  await query(
    manager,
    `INSERT INTO board_changes (${COLUMNS.join(', ')}) VALUES (?, ?, NULL, 0, 0, ?)`,
    [board.spaceId, board.sprintId, Date.now()],
  );
}
