/** No lock within the wait: another process is still migrating. Not worth retrying at once. */
export class MigrationLockTimeout extends Error {
  override readonly name = 'MigrationLockTimeout';
}

/** How long a process waits for another's migrations before giving up (a long ALTER included). */
export const MIGRATION_LOCK_WAIT_SECONDS = 600;
