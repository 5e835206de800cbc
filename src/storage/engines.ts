import type { DataSource } from 'typeorm';
import { dataSourceOf, Queryable, SqlDialect } from './dialect/sql-dialect';
import type { DatabaseConfig } from './engine/database-config';
import type { DatabaseEngine } from './engine/database-engine';
import { MYSQL_ENGINE } from './mysql/mysql-engine';
import { POSTGRES_ENGINE } from './postgres/postgres-engine';
import { SQLITE_ENGINE } from './sqlite/sqlite-engine';

/** The databases the module runs on: a new one is a folder of storage/ and a line here. */
export const ENGINES: readonly DatabaseEngine[] = [SQLITE_ENGINE, MYSQL_ENGINE, POSTGRES_ENGINE];

const byDriver = new Map(ENGINES.flatMap((engine) => engine.driverTypes.map((t) => [t, engine])));

/** A data source on a database the module does not run on. */
export class UnsupportedDatabaseError extends Error {
  override readonly name = 'UnsupportedDatabaseError';
}

/**
 * The engine of a data source, by its TypeORM driver type. Any other type is refused by name,
 * never served with another database's SQL.
 */
export function engineOf(source: Queryable): DatabaseEngine {
  const type = String(dataSourceOf(source).options.type);
  const engine = byDriver.get(type);
  if (!engine)
    throw new UnsupportedDatabaseError(
      `The loyalty module does not run on TypeORM's "${type}" driver: use ${[...byDriver.keys()].map((t) => `"${t}"`).join(', ')}`,
    );
  return engine;
}

/** The engine of a parsed DATABASE_URL. */
export function engineOfConfig(config: DatabaseConfig): DatabaseEngine {
  const engine = ENGINES.find((candidate) => candidate.name === config.kind);
  if (!engine) throw new UnsupportedDatabaseError(`No database engine "${String(config.kind)}"`);
  return engine;
}

/**
 * The dialect of a data source (or of the one under a manager or runner), as far as known without
 * asking the server. The injected dialect is {@link resolveDialect}'s.
 */
export function dialectOf(source: Queryable): SqlDialect {
  return engineOf(source).dialect(dataSourceOf(source));
}

/**
 * The dialect of the server a data source is connected to, asking it which it is where that
 * matters: by the server, never by the data source's `type`, which says `mysql` for MariaDB as
 * often as not.
 */
export function resolveDialect(dataSource: DataSource): Promise<SqlDialect> {
  return engineOf(dataSource).resolveDialect(dataSource);
}
