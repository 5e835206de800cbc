import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import { MigrationLockTimeout, MIGRATION_LOCK_WAIT_SECONDS } from '../schema/migration-lock';

/** How often a process waiting for another's migrations tries the write lock again. */
const RETRY_MS = 100;

/**
 * Runs `work` (migrations) in one transaction that holds SQLite's write lock from its first
 * statement: TypeORM's runner then reads which migrations ran, and applies the rest, inside it
 * (it starts no transaction of its own while one is open), so a process started beside another
 * waits, then finds them applied. Without it, both would read "none applied" and the second would
 * fail on the first's tables.
 *
 * The lock is taken by writing the database header's user_version with its own value (a write
 * that changes nothing), with busy_timeout at 0 meanwhile and waits between tries made with
 * timers: better-sqlite3 waits for a lock by blocking the thread, which would stop another
 * connection of the same process from finishing the migrations it waits for.
 */
export async function withSqliteMigrationLock<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
): Promise<T> {
  // better-sqlite3 has one connection per data source, and TypeORM one runner for it: this one.
  const runner = dataSource.createQueryRunner();
  const busyTimeout = await pragmaNumber(runner, 'busy_timeout');
  const until = Date.now() + MIGRATION_LOCK_WAIT_SECONDS * 1000;
  await runner.query('PRAGMA busy_timeout = 0');
  try {
    while (!(await takeWriteLock(runner))) {
      if (Date.now() >= until) {
        throw new MigrationLockTimeout(
          `Another process has held this SQLite database's write lock for ${MIGRATION_LOCK_WAIT_SECONDS} s while this one waited to migrate it: not starting`,
        );
      }
      await sleep(RETRY_MS);
    }
  } finally {
    await runner.query(`PRAGMA busy_timeout = ${busyTimeout}`);
  }
  try {
    const result = await work();
    await runner.commitTransaction();
    return result;
  } catch (error) {
    await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  }
}

/** Opens a transaction holding the write lock, or answers false (and opens none) when it is held. */
async function takeWriteLock(runner: QueryRunner): Promise<boolean> {
  await runner.startTransaction();
  try {
    const version = await pragmaNumber(runner, 'user_version');
    await runner.query(`PRAGMA user_version = ${version}`);
    return true;
  } catch (error) {
    await runner.rollbackTransaction();
    if (isBusy(error)) return false;
    throw error;
  }
}

async function pragmaNumber(runner: QueryRunner, name: string): Promise<number> {
  const rows = (await runner.query(`PRAGMA ${name}`)) as Array<Record<string, unknown>>;
  const value = Number(Object.values(rows[0] ?? {})[0]);
  if (!Number.isSafeInteger(value)) throw new Error(`PRAGMA ${name} answered no number`);
  return value;
}

function isBusy(error: unknown): boolean {
  const cause = (error as { driverError?: unknown }).driverError ?? error;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
