import type { RecordOutcome } from '../records/record-outcome';

/**
 * Where a writer may write: `spaceId` for a space token (its own space only), null or absent for a
 * deployment token and the command line's import (every space).
 */
export interface WriteScope {
  spaceId?: number | null;
}

/** The refusal of a record for `target`, another space than the writer's. */
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
