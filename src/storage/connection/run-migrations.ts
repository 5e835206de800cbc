import type { DataSource, Migration } from 'typeorm';
import { engineOf } from '../engines';

export { MigrationLockTimeout } from '../schema/migration-lock';

/**
 * Applies pending migrations, one process at a time: under a lock of the database's own (a named
 * lock on MySQL/MariaDB, an advisory lock on PostgreSQL, SQLite's write lock), held on a
 * connection of its own, so instances started together never run the same migration twice
 * (TypeORM's runner takes no lock: the second would fail on a table the first created). A process
 * that waited finds the migrations applied and has nothing to do.
 */
export function runMigrationsLocked(
  dataSource: DataSource,
  options: { transaction?: 'all' | 'none' | 'each' } = {},
): Promise<Migration[]> {
  return engineOf(dataSource).withMigrationLock(dataSource, () =>
    dataSource.runMigrations(options),
  );
}
