/** What became of one record. */
export type RecordOutcome =
  | { status: 'accepted' }
  /** A points record whose key was already applied with the same content. */
  | { status: 'duplicate' }
  | { status: 'refused'; field?: string; reason: string };

export const accepted = (): RecordOutcome => ({ status: 'accepted' });
export const duplicate = (): RecordOutcome => ({ status: 'duplicate' });
export const refused = (field: string | undefined, reason: string): RecordOutcome => ({
  status: 'refused',
  ...(field ? { field } : {}),
  reason: field ? `${field} ${reason}` : reason,
});
