import type { DataSourceOptions } from 'typeorm';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../../loyalty.entities';
import {
  buildDataSourceOptions,
  DataSourceExtras,
  resolveDataSourceOptions,
} from '../../storage/connection/data-source-options';
import type { DatabaseConfig } from '../../storage/connection/database-url';
import { AdminSessionEntity } from '../dashboard/admin-session.entity';
import { AdminEntity } from '../dashboard/admin.entity';
import { Dashboard1763800000000 } from '../dashboard/migrations/1763800000000-dashboard';

/** Our host's tables: the module's, and the dashboard's admins and sessions. */
export const HOST_ENTITIES = [...LOYALTY_ENTITIES, AdminEntity, AdminSessionEntity];
export const HOST_MIGRATIONS = [...LOYALTY_MIGRATIONS, Dashboard1763800000000];

type HostExtras = Omit<DataSourceExtras, 'entities' | 'migrations'>;

/** The host's data source (server, CLI, ormconfig.ts): the module's tables and the dashboard's. */
export function hostDataSourceOptions(
  database: DatabaseConfig,
  extras: HostExtras = {},
): DataSourceOptions {
  return buildDataSourceOptions(database, {
    ...extras,
    entities: HOST_ENTITIES,
    migrations: HOST_MIGRATIONS,
  });
}

/** {@link hostDataSourceOptions} after asking a MySQL-protocol server which flavour it is. */
export function resolveHostDataSourceOptions(
  database: DatabaseConfig,
  extras: HostExtras = {},
): Promise<DataSourceOptions> {
  return resolveDataSourceOptions(database, {
    ...extras,
    entities: HOST_ENTITIES,
    migrations: HOST_MIGRATIONS,
  });
}
