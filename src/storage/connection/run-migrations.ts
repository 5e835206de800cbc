import type { DataSource, Migration } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

/** The MySQL/MariaDB named lock that one process at a time holds while it migrates. */
export const MIGRATION_LOCK = 'loyalty_leaderboard_migrations';
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
  const runner = dataSource.createQueryRunner();
  try {
    const [row] = (await runner.query('SELECT GET_LOCK(?, ?) AS locked', [
      MIGRATION_LOCK,
      LOCK_WAIT_SECONDS,
    ])) as Array<{ locked: number | string | null }>;
    if (Number(row?.locked) !== 1) {
      throw new Error(
        `Another process has been migrating this database for ${LOCK_WAIT_SECONDS} s (lock ${MIGRATION_LOCK}): not starting`,
      );
    }
    try {
      return await dataSource.runMigrations(options);
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    await runner.release();
  }
}
