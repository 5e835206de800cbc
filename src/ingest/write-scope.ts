import { refused, type RecordOutcome } from '../records/record-outcome';

/**
 * Where a writer may write: `spaceId` for a space token (its own space only), null or absent for a
 * deployment token and the command line's import (every space).
 */
export interface WriteScope {
  spaceId?: number | null;
}

/**
 * The refusal of a record that itself names `target`, another space than the writer's: the
 * message only repeats what the record said, whether that space exists or not.
 */
export function outsideSpace(field: string, own: number, target: number): RecordOutcome {
  return {
    status: 'refused',
    field,
    reason: `this token belongs to space ${own} and cannot write into space ${target}`,
  };
}

/** Profiles are shared by every space: a space token sends none. */
export function profileOutsideSpace(own: number): RecordOutcome {
  return {
    status: 'refused',
    reason:
      `profiles are shared by every space: only deployment tokens send profile records ` +
      `(this token belongs to space ${own})`,
  };
}

/**
 * The refusal of a sprint or quest record whose id is stored in another space (ids are shared by
 * every space, and a sprint or quest never moves). It names no space: which one holds the id, and
 * whether that one is private, is none of this writer's business.
 */
export function idOfAnotherSpace(id: number | string): RecordOutcome {
  return refused('id', `${id} is already used by another space`);
}
