import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { MigrationLockTimeout, MIGRATION_LOCK_WAIT_SECONDS } from '../schema/migration-lock';
import { driverOf } from './pg-statements';

/**
 * The advisory lock key that one process at a time holds while it migrates a database: a 64-bit
 * number from the database's name (advisory locks are a database's own; the name keeps apart
 * deployments that share one anyway through different names of it).
 */
export function postgresMigrationLockKey(database: string): string {
  const digest = createHash('sha256').update(`loyalty_migrations:${database}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * Runs `work` holding a session-level advisory lock on a connection of its own, waiting at most
 * MIGRATION_LOCK_WAIT_SECONDS for it (lock_timeout): a process that waited finds the migrations
 * applied and has nothing to do. A connection that may still hold the lock is closed, not pooled.
 */
export async function withPostgresMigrationLock<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
): Promise<T> {
  const key = postgresMigrationLockKey(String(dataSource.options.database ?? ''));
  const client = await driverOf(dataSource).master.connect();
  let released = false;
  try {
    await client.query({ text: `SET lock_timeout = '${MIGRATION_LOCK_WAIT_SECONDS}s'` });
    try {
      await client.query({ text: 'SELECT pg_advisory_lock($1::bigint)', values: [key] });
    } catch (error) {
      if ((error as { code?: unknown }).code === '55P03')
        throw new MigrationLockTimeout(
          `Another process has been migrating this database for ${MIGRATION_LOCK_WAIT_SECONDS} s (advisory lock ${key}): not starting`,
        );
      throw error;
    }
    try {
      return await work();
    } finally {
      released = await client
        .query({ text: 'SELECT pg_advisory_unlock($1::bigint)', values: [key] })
        .then(() => client.query({ text: 'RESET lock_timeout' }))
        .then(() => true)
        .catch(() => false);
    }
  } finally {
    client.release(!released);
  }
}
