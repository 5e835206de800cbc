import { createHash } from 'node:crypto';
import type { DataSource, Migration } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

/**
 * The MySQL/MariaDB named lock that one process at a time holds while it migrates a database.
 * Named locks are the server's, not a schema's: the database's name is in it (hashed, since a
 * lock name has at most 64 characters), so deployments sharing a server do not wait for each other.
 */
export function migrationLockName(database: string): string {
  const digest = createHash('sha256').update(database).digest('hex').slice(0, 24);
  return `loyalty_migrations_${digest}`;
}

/** No lock within the wait: another process is still migrating. Not worth retrying at once. */
export class MigrationLockTimeout extends Error {
  override readonly name = 'MigrationLockTimeout';
}
/** How long a process waits for another's migrations before giving up (a long ALTER included). */
const LOCK_WAIT_SECONDS = 600;

/**
 * Applies pending migrations, one process at a time: on MySQL/MariaDB under a named lock held on
 * a connection of its own (GET_LOCK), so instances started together never run the same migration
 * twice (TypeORM's runner takes no lock: the second would fail on a table the first created). A
 * process that waited finds the migrations applied and has nothing to do. SQLite's own write lock
 * keeps one writer at a time.
 */
export async function runMigrationsLocked(
  dataSource: DataSource,
  options: { transaction?: 'all' | 'none' | 'each' } = {},
): Promise<Migration[]> {
  if (dialectOf(dataSource).kind === 'sqlite') return dataSource.runMigrations(options);
  const lock = migrationLockName(String(dataSource.options.database ?? ''));
  const runner = dataSource.createQueryRunner();
  let released = false;
  try {
    const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [
      lock,
      LOCK_WAIT_SECONDS,
    ])) as Array<{ locked: number | string | null }>;
    if (Number(row?.locked) !== 1) {
      throw new MigrationLockTimeout(
        `Another process has been migrating this database for ${LOCK_WAIT_SECONDS} s (lock ${lock}): not starting`,
      );
    }
    try {
      return await dataSource.runMigrations(options);
    } finally {
      released = await runner
        .query('SELECT RELEASE_LOCK(?)', [lock])
        .then(() => true)
        .catch(() => false);
    }
  } finally {
    // A connection that may still hold the lock is closed, not pooled: closing releases it.
    if (released) await runner.release();
    else await destroyConnection(runner);
  }
}

/** Closes the runner's own connection instead of giving it back to the pool. */
async function destroyConnection(runner: { release(): Promise<void> }): Promise<void> {
  const connection = (runner as unknown as { databaseConnection?: { destroy?(): void } })
    .databaseConnection;
  connection?.destroy?.();
  await runner.release().catch(() => undefined);
}
