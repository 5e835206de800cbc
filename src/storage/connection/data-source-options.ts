import type { DataSourceOptions, MixedList, Logger as TypeOrmLogger } from 'typeorm';
import type { DatabaseConfig } from '../engine/database-config';
import { engineOfConfig } from '../engines';

export interface DataSourceExtras {
  /** The entity classes of the data source (a host's tables and the module's). */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string>;
  /** The migrations, in order. */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  migrationsRun?: boolean;
  logger?: TypeOrmLogger;
}

/**
 * TypeORM options for a database URL, with the connection settings the module relies on (each
 * database's own: see its engine). A MySQL-protocol server is asked which it is first.
 */
export function dataSourceOptions(
  database: DatabaseConfig,
  extras: DataSourceExtras,
): Promise<DataSourceOptions> {
  return engineOfConfig(database).dataSourceOptions(database, {
    entities: extras.entities,
    migrations: extras.migrations,
    migrationsRun: extras.migrationsRun ?? false,
    migrationsTransactionMode: 'each',
    synchronize: false,
    ...(extras.logger ? { logger: extras.logger, logging: true as const } : {}),
  });
}
