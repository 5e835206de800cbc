import type { DataSourceOptions } from 'typeorm';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../../loyalty.entities';
import { dataSourceOptions, DataSourceExtras } from '../../storage/connection/data-source-options';
import type { DatabaseConfig } from '../../storage/connection/database-url';
import { DASHBOARD_ENTITIES } from '../dashboard/dashboard.entities';
import { Dashboard1763800000000 } from '../dashboard/migrations/1763800000000-dashboard';
import { Teams1764400000001 } from '../dashboard/migrations/1764400000001-teams';
import { SignInSecret1764400000002 } from '../dashboard/migrations/1764400000002-sign-in-secret';
import { PointsUploads1764600000001 } from '../dashboard/migrations/1764600000001-points-uploads';
import { HostSecretEntity } from '../dashboard/host-secret.entity';

/**
 * Our host's tables: the module's, and the dashboard's accounts, sessions, teams, audit trail and
 * points uploads.
 */
export const HOST_ENTITIES = [...LOYALTY_ENTITIES, ...DASHBOARD_ENTITIES, HostSecretEntity];
export const HOST_MIGRATIONS = [
  ...LOYALTY_MIGRATIONS,
  Dashboard1763800000000,
  Teams1764400000001,
  SignInSecret1764400000002,
  PointsUploads1764600000001,
];

type HostExtras = Omit<DataSourceExtras, 'entities' | 'migrations'>;

/** The host's data source (server, CLI, ormconfig.ts): the module's tables and the dashboard's. */
export function hostDataSourceOptions(
  database: DatabaseConfig,
  extras: HostExtras = {},
): Promise<DataSourceOptions> {
  return dataSourceOptions(database, {
    ...extras,
    entities: HOST_ENTITIES,
    migrations: HOST_MIGRATIONS,
  });
}
