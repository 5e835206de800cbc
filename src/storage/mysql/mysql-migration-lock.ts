import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { MigrationLockTimeout, MIGRATION_LOCK_WAIT_SECONDS } from '../schema/migration-lock';
import { discard } from './mysql-snapshot';

/**
 * The MySQL/MariaDB named lock that one process at a time holds while it migrates a database.
 * Named locks are the server's, not a schema's: the database's name is in it (hashed, since a
 * lock name has at most 64 characters), so deployments sharing a server do not wait for each other.
 */
export function migrationLockName(database: string): string {
  const digest = createHash('sha256').update(database).digest('hex').slice(0, 24);
  return `loyalty_migrations_${digest}`;
}

/**
 * Runs `work` under the named lock, held on a connection of its own (GET_LOCK): a process that
 * waited finds the migrations applied and has nothing to do.
 */
export async function withMysqlMigrationLock<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
): Promise<T> {
  const lock = migrationLockName(String(dataSource.options.database ?? ''));
  const runner = dataSource.createQueryRunner();
  let released = false;
  try {
    const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [
      lock,
      MIGRATION_LOCK_WAIT_SECONDS,
    ])) as Array<{ locked: number | string | null }>;
    if (Number(row?.locked) !== 1) {
      throw new MigrationLockTimeout(
        `Another process has been migrating this database for ${MIGRATION_LOCK_WAIT_SECONDS} s (lock ${lock}): not starting`,
      );
    }
    try {
      return await work();
    } finally {
      released = await runner
        .query('SELECT RELEASE_LOCK(?)', [lock])
        .then(() => true)
        .catch(() => false);
    }
  } finally {
    // A connection that may still hold the lock is closed, not pooled: closing releases it.
    if (released) await runner.release();
    else await discard(runner);
  }
}
