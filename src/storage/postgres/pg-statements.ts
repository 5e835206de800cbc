import { type DataSource, QueryFailedError, type QueryRunner } from 'typeorm';
import { dataSourceOf, Queryable, queryRunnerOf } from '../dialect/sql-dialect';
import { renderForPostgres } from './house-sql';

/** The part of node-postgres's result the module reads. */
export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
}

/** A query as node-postgres takes it: per-query type parsers leave every other query alone. */
export interface PgQueryConfig {
  text: string;
  values?: unknown[];
  types?: PgTypes;
  rowMode?: 'array';
  /** Client-side: the query fails after this long without an answer (node-postgres 8.13 on). */
  query_timeout?: number;
}

/** A node-postgres client or pool: both run a query config. */
export interface PgQueryable {
  query(config: PgQueryConfig): Promise<PgResult>;
}

/** node-postgres's type parser table (its `types`, or the `types` of a query). */
export interface PgTypes {
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** The parts of node-postgres's module the module uses. */
export interface PgModule {
  types: PgTypes;
  Client: new (config: Record<string, unknown>) => PgClient;
  Pool: new (config: Record<string, unknown>) => PgPool;
}

export interface PgClient extends PgQueryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'error' | 'end', listener: () => void): void;
  /** The socket (node-postgres keeps it on its connection). */
  connection?: { stream?: { destroy(): void } };
}

export interface PgPoolClient extends PgQueryable {
  release(error?: Error | boolean): void;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'connect' | 'error', listener: (client: PgQueryable) => void): void;
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

/** The part of TypeORM's PostgreSQL driver the module reads. */
interface PostgresDriverLike {
  /** The pool of the primary. */
  master: PgPool;
  /** The node-postgres module TypeORM loaded (the host's copy). */
  postgres: PgModule;
}

export const driverOf = (dataSource: DataSource) =>
  dataSource.driver as unknown as PostgresDriverLike;

/** OIDs of the types read as numbers (see pgTypesOf). */
const INT8 = 20;
const NUMERIC = 1700;

/** A whole number that fits a JavaScript number, as one; anything else as the text it came as. */
function parseWhole(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

const typesByModule = new WeakMap<PgModule, PgTypes>();

/**
 * The module's type parsers: BIGINT and NUMERIC (COUNT(*), SUM) as numbers where they fit, as
 * mysql2 gives them (supportBigNumbers), and every other type as node-postgres would. Passed with
 * each query: a global setTypeParser would change what the host's own queries read.
 */
export function pgTypesOf(pg: PgModule): PgTypes {
  let types = typesByModule.get(pg);
  if (!types) {
    types = {
      getTypeParser: (oid, format) =>
        (oid === INT8 || oid === NUMERIC) && format !== 'binary'
          ? parseWhole
          : pg.types.getTypeParser(oid, format),
    };
    typesByModule.set(pg, types);
  }
  return types;
}

/** Where a statement is told to TypeORM's logger, as TypeORM's own query runner tells it. */
interface StatementLog {
  logger: DataSource['logger'];
  runner?: QueryRunner;
}

/**
 * Runs one statement of house SQL on a node-postgres client or pool: rendered for PostgreSQL
 * (house-sql.ts), with the module's type parsers; a failure is TypeORM's QueryFailedError, as from
 * any other statement.
 */
export async function queryPg(
  on: PgQueryable,
  pg: PgModule,
  sql: string,
  params: readonly unknown[] = [],
  options: { rowMode?: 'array'; timeoutMs?: number; log?: StatementLog } = {},
): Promise<PgResult> {
  const config: PgQueryConfig = {
    text: renderForPostgres(sql),
    values: [...params],
    types: pgTypesOf(pg),
    ...(options.rowMode ? { rowMode: options.rowMode } : {}),
    ...(options.timeoutMs ? { query_timeout: options.timeoutMs } : {}),
  };
  const { log } = options;
  log?.logger.logQuery(config.text, config.values, log.runner);
  try {
    return await on.query(config);
  } catch (error) {
    log?.logger.logQueryError(error as Error, config.text, config.values, log.runner);
    throw new QueryFailedError(config.text, config.values, error as Error);
  }
}

/**
 * Runs `work` on a connection of `pool` and gives it back, dropping it only when a failure may
 * have left it unusable: anything but an error the server reported for the statement (a lost
 * socket, a client-side timeout with the statement still running, a FATAL). pool.query would drop
 * it on any error, so that every refused statement cost a new connection.
 */
export async function onPooledClient<T>(
  pool: PgPool,
  work: (client: PgPoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    const result = await work(client);
    client.release();
    return result;
  } catch (error) {
    client.release(statementError(error) ? undefined : (error as Error));
    throw error;
  }
}

/** Whether `error` is the server's refusal of one statement, after which its session goes on. */
function statementError(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  return (cause as { severity?: unknown } | null)?.severity === 'ERROR';
}

/**
 * Runs one statement of house SQL where `source` runs statements: on the transaction's connection
 * when it is bound to one, else on a pooled connection. TypeORM's logger sees it as it sees its own.
 */
export async function runPostgres(
  source: Queryable,
  sql: string,
  params: readonly unknown[],
): Promise<PgResult> {
  const dataSource = dataSourceOf(source);
  const driver = driverOf(dataSource);
  const runner = queryRunnerOf(source);
  const log = { logger: dataSource.logger, runner };
  if (runner) {
    const client = (await runner.connect()) as PgQueryable;
    return queryPg(client, driver.postgres, sql, params, { log });
  }
  return onPooledClient(driver.master, (client) =>
    queryPg(client, driver.postgres, sql, params, { log }),
  );
}
