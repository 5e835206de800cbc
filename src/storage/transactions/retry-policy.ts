/**
 * Errors after which the whole unit of work runs again, and how many attempts each gets: the codes
 * of mysql2, better-sqlite3 and PostgreSQL (SQLSTATE), which never collide.
 */
const RETRYABLE: Record<string, number> = {
  ER_LOCK_DEADLOCK: 5,
  ER_LOCK_WAIT_TIMEOUT: 5,
  // PostgreSQL: deadlock_detected, serialization_failure (a write under REPEATABLE READ met a
  // newer version), lock_not_available (lock_timeout).
  '40P01': 5,
  '40001': 5,
  '55P03': 5,
  // A duplicate key raced in by another writer: it has committed (the insert waited for it), and
  // the re-run sees its row. Concurrent deliveries of overlapping batches race a unit again on a
  // key of each writer it meets, so a re-run may meet another; a key met twice is a real
  // conflict, not a race (see backOffOrThrow).
  ER_DUP_ENTRY: 20,
  // PostgreSQL's unique_violation, alike.
  '23505': 20,
  // Another process held SQLite's write lock past busy_timeout (reported as BUSY_SNAPSHOT when
  // that process committed meanwhile): wait and run again.
  SQLITE_BUSY: 20,
  SQLITE_BUSY_SNAPSHOT: 20,
};

/** Codes whose attempts count together: the same kind of wait, met in another form. */
const RETRY_FAMILY: Record<string, string> = {
  ER_LOCK_WAIT_TIMEOUT: 'ER_LOCK_DEADLOCK',
  SQLITE_BUSY_SNAPSHOT: 'SQLITE_BUSY',
  '40001': '40P01',
  '55P03': '40P01',
};

/** Duplicate-key codes: a key met twice by one unit is a real conflict (see backOffOrThrow). */
const DUPLICATE_KEY = new Set(['ER_DUP_ENTRY', '23505']);

/** A unit's failed attempts so far, by kind of error, and the duplicate keys they met. */
export interface Attempts {
  byFamily: Map<string, number>;
  duplicates: Set<string>;
}

export const newAttempts = (): Attempts => ({ byFamily: new Map(), duplicates: new Set() });

/** How many attempts a unit gets when it fails with this error (1: no retry). */
export function retryLimitOf(error: unknown): number {
  const code = codeOf(error);
  return code ? (RETRYABLE[code] ?? 1) : 1;
}

/**
 * Waits before another attempt, or throws the error when it is not retried (again). Attempts
 * are counted per kind of error: deadlocks first do not use up a duplicate key's re-runs. A
 * duplicate key that an earlier attempt met too is thrown at once.
 */
export async function backOffOrThrow(error: unknown, attempts: Attempts): Promise<void> {
  const code = codeOf(error) ?? '';
  const family = RETRY_FAMILY[code] ?? code;
  const attempt = (attempts.byFamily.get(family) ?? 0) + 1;
  attempts.byFamily.set(family, attempt);
  if (attempt >= retryLimitOf(error)) throw error;
  const entry = DUPLICATE_KEY.has(code) ? duplicateEntryOf(error) : undefined;
  if (entry !== undefined) {
    if (attempts.duplicates.has(entry)) throw error;
    attempts.duplicates.add(entry);
  }
  await new Promise((resolve) =>
    setTimeout(resolve, Math.min(250, 5 * 2 ** attempt) + Math.random() * 20),
  );
}

/**
 * The key and index of a duplicate-key error, or undefined when they cannot tell keys apart.
 * PostgreSQL names the whole key and its constraint ("Key (event_key)=(k) already exists.");
 * MySQL/MariaDB ("Duplicate entry 'k' for key 'PRIMARY'") show the first 61-64 characters of a
 * key (MariaDB ends a cut one with "..."), and keys sharing those are not the same key.
 */
function duplicateEntryOf(error: unknown): string | undefined {
  const e = error as {
    message?: unknown;
    driverError?: { sqlMessage?: unknown; detail?: unknown; constraint?: unknown };
  };
  if (typeof e.driverError?.detail === 'string')
    return `${String(e.driverError.constraint)}: ${e.driverError.detail}`;
  const message = String(e.driverError?.sqlMessage ?? e.message);
  const shown = /^Duplicate entry '(.*)' for key /s.exec(message)?.[1];
  return shown !== undefined && shown.length < 61 ? message : undefined;
}

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e.driverError?.code ?? e.code;
  return typeof code === 'string' ? code : undefined;
}
