import type { DataSource, Migration } from 'typeorm';
import { engineOf } from '../engines';
import { MigrationRefusedError } from '../schema/server-requirements';
import { query } from '../statements';

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

/** A repair that would drop a table holding rows: nothing was dropped. */
export class RepairRefusedError extends Error {
  override readonly name = 'RepairRefusedError';
}

/** What a repair did: the left-over tables it dropped, by migration, and what it then applied. */
export interface MigrationRepair {
  dropped: Array<{ migration: string; tables: string[] }>;
  applied: Migration[];
}

/**
 * runMigrationsLocked for a schema a crash left half-made: a migration refused only because
 * tables it creates are there with no record of it (MySQL commits each DDL statement at once, so
 * one cut off mid-way leaves some) has those tables dropped, when every one of them is empty, and
 * runs again; all under the migration lock. A left-over table holding rows may be another
 * application's, or data: RepairRefusedError names it and nothing is dropped. Where DDL is
 * transactional (SQLite, PostgreSQL) a cut-off migration leaves nothing, so such tables are never
 * its leftovers, and nothing is dropped either.
 */
export function repairAndRunMigrations(
  dataSource: DataSource,
  options: { transaction?: 'all' | 'none' | 'each' } = {},
): Promise<MigrationRepair> {
  return engineOf(dataSource).withMigrationLock(dataSource, async () => {
    const dropped: MigrationRepair['dropped'] = [];
    const applied: Migration[] = [];
    for (;;) {
      try {
        applied.push(...(await dataSource.runMigrations(options)));
        return { dropped, applied };
      } catch (error) {
        const leftovers = error instanceof MigrationRefusedError ? error.leftoverTables : [];
        const onlyLeftovers = error instanceof MigrationRefusedError && error.problems.length === 1;
        if (!onlyLeftovers || leftovers.length === 0) throw error;
        if (dropped.some((repair) => repair.migration === error.migration)) throw error;
        if (engineOf(dataSource).transactionalDdl)
          throw new RepairRefusedError(
            `Migration ${error.migration} finds tables it creates already there (` +
              `${leftovers.join(', ')}), but a migration cut off here leaves nothing behind (each ` +
              "runs in a transaction): they are another application's or were made by hand, so " +
              'nothing was dropped. Give the loyalty tables a database of their own, or drop these ' +
              'tables yourself',
          );
        const full: string[] = [];
        for (const table of leftovers) {
          const [row] = await query<{ n: unknown }>(
            dataSource,
            `SELECT COUNT(*) AS n FROM ${table}`,
          );
          const rows = Number(row?.n);
          if (rows > 0) full.push(`${table} (${rows} ${rows === 1 ? 'row' : 'rows'})`);
        }
        if (full.length > 0)
          throw new RepairRefusedError(
            `Migration ${error.migration} finds tables it creates already there, and ` +
              `${full.join(', ')} ${full.length === 1 ? 'holds' : 'hold'} rows: data, or another ` +
              "application's, so nothing was dropped. " +
              'Give the loyalty tables a database of their own, or drop these tables yourself if ' +
              'they are left over',
          );
        for (const table of [...leftovers].reverse())
          await query(dataSource, `DROP TABLE ${table}`);
        dropped.push({ migration: error.migration, tables: [...leftovers] });
      }
    }
  });
}
