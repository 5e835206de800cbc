import type { DataSource, EntityManager } from 'typeorm';
import { identifyServer, knownServerFlavor, ServerFlavor } from './server-flavor';

/** Which engine a dialect speaks: for storage's own code (migrations, drivers) only. */
export type DialectKind = 'sqlite' | 'mysql';

/**
 * How a column is updated on a key conflict: overwritten, added to, kept at the greater, or set to
 * another column's value as the row held it before this statement (`{ priorOf }`).
 */
export type ConflictUpdate = 'set' | 'add' | 'max' | { priorOf: string };

/**
 * The SQL differences between the databases the service runs on (better-sqlite3, and mysql2 for
 * MySQL or MariaDB), chosen once per data source. Feature code asks it for syntax, locks and index
 * hints; it never asks which database it is on.
 */
export interface SqlDialect {
  readonly kind: DialectKind;
  /**
   * Whether writers run at once and lock rows (MySQL/MariaDB). SQLite's single writer holds the
   * whole database, so its locking reads are plain reads.
   */
  readonly rowLocks: boolean;
  /** Whether an upsert can answer the rows it wrote (`RETURNING`: MariaDB and SQLite). */
  readonly upsertReturning: boolean;
  /** INSERT that skips rows whose key already exists. */
  insertIgnore(table: string, columns: readonly string[], rows: number): string;
  /** INSERT ... or update the listed columns on a key conflict. */
  upsert(
    table: string,
    columns: readonly string[],
    keyColumns: readonly string[],
    updates: Readonly<Record<string, ConflictUpdate>>,
    rows: number,
  ): string;
  /** A table named in FROM, read through one index whatever the planner would pick. */
  withIndex(table: string, index: string): string;
  /** A table named in FROM, read through its primary key. */
  byPrimaryKey(table: string): string;
  /**
   * A SELECT exempt from the session's statement time limit (DatabaseProbe.limitStatements sets
   * one as long as a request may take): for reads that outlast any request, such as a rank-index
   * load of millions of entries, which the limit would cut off half-way.
   */
  untimed(select: string): string;
  /** The suffix of a SELECT that locks the rows it reads ('' where writers do not lock rows). */
  lockRows(mode: 'share' | 'update'): string;
  /**
   * A condition on the ledger's events of one space in [start, end), shaped so that the ledger's
   * time index of this database finds them (see the ledger's migrations).
   */
  ledgerWindow(spaceId: number, start: number, end: number): { where: string; params: number[] };
}

function valuesClause(columns: readonly string[], rows: number): string {
  const row = `(${columns.map(() => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** A plain INSERT of `rows` rows. */
export function insertSql(table: string, columns: readonly string[], rows: number): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${valuesClause(columns, rows)}`;
}

/**
 * The `column = value` list of an upsert, in the spelling of one dialect. Copies of prior values
 * come first: MySQL assigns left to right, each assignment seeing the ones before it, while SQLite
 * reads every value as the row was.
 */
function conflictAssignments(
  updates: Readonly<Record<string, ConflictUpdate>>,
  spell: { current(column: string): string; incoming(column: string): string; greater: string },
): string {
  const entries = Object.entries(updates);
  const copies = entries.filter(([, how]) => typeof how === 'object');
  return [...copies, ...entries.filter(([, how]) => typeof how !== 'object')]
    .map(([column, how]) => {
      const [current, incoming] = [spell.current(column), spell.incoming(column)];
      const value =
        typeof how === 'object'
          ? spell.current(how.priorOf)
          : how === 'add'
            ? `${current} + ${incoming}`
            : how === 'max'
              ? `${spell.greater}(${current}, ${incoming})`
              : incoming;
      return `${column} = ${value}`;
    })
    .join(', ');
}

/** The day buckets of SQLite's ledger time index (migration 1764200000000). */
const LEDGER_DAY_MS = 86_400_000;

/**
 * SQLite's dialect, for code that only ever runs on SQLite and holds a native connection rather
 * than a data source (the board backlog's writer).
 */
export const SQLITE: SqlDialect = {
  kind: 'sqlite',
  rowLocks: false,
  upsertReturning: true,
  insertIgnore: (table, columns, rows) =>
    `INSERT OR IGNORE INTO ${table} (${columns.join(', ')}) VALUES ${valuesClause(columns, rows)}`,
  upsert: (table, columns, keyColumns, updates, rows) => {
    const assignments = conflictAssignments(updates, {
      current: (column) => `${table}.${column}`,
      incoming: (column) => `excluded.${column}`,
      greater: 'MAX',
    });
    return `${insertSql(table, columns, rows)} ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${assignments}`;
  },
  withIndex: (table, index) => `${table} INDEXED BY ${index}`,
  untimed: (select) => select,
  // The primary key's own index, whether the table has rowids or not.
  byPrimaryKey: (table) => `${table} INDEXED BY sqlite_autoindex_${table}_1`,
  lockRows: () => '',
  /**
   * SQLite's time index holds days: the condition names the days the window spans, which the
   * index finds, then the exact window. Integer division truncates toward 0 as Math.trunc does,
   * and the ledger holds whole milliseconds only.
   */
  ledgerWindow: (spaceId, start, end) => ({
    where: `space_id = ? AND occurred_at / ${LEDGER_DAY_MS} BETWEEN ? AND ?
       AND occurred_at >= ? AND occurred_at < ?`,
    params: [
      spaceId,
      Math.trunc(start / LEDGER_DAY_MS),
      Math.trunc((end - 1) / LEDGER_DAY_MS),
      start,
      end,
    ],
  }),
};

function mysqlDialect(flavor: ServerFlavor): SqlDialect {
  const upsertReturning = flavor === 'mariadb';
  return {
    kind: 'mysql',
    rowLocks: true,
    upsertReturning,
    insertIgnore: (table, columns, rows) =>
      `INSERT IGNORE INTO ${table} (${columns.join(', ')}) VALUES ${valuesClause(columns, rows)}`,
    upsert: (table, columns, _keyColumns, updates, rows) => {
      const assignments = conflictAssignments(updates, {
        current: (column) => column,
        incoming: (column) => `VALUES(${column})`,
        greater: 'GREATEST',
      });
      return `${insertSql(table, columns, rows)} ON DUPLICATE KEY UPDATE ${assignments}`;
    },
    withIndex: (table, index) => `${table} FORCE INDEX (${index})`,
    byPrimaryKey: (table) => `${table} FORCE INDEX (PRIMARY)`,
    untimed: (select) =>
      flavor === 'mariadb'
        ? `SET STATEMENT max_statement_time = 0 FOR ${select}`
        : select.replace(/^SELECT\b/, 'SELECT /*+ MAX_EXECUTION_TIME(0) */'),
    lockRows: (mode) => (mode === 'share' ? ' LOCK IN SHARE MODE' : ' FOR UPDATE'),
    ledgerWindow: (spaceId, start, end) => ({
      where: 'space_id = ? AND occurred_at >= ? AND occurred_at < ?',
      params: [spaceId, start, end],
    }),
  };
}

const MYSQL = mysqlDialect('mysql');
const MARIADB = mysqlDialect('mariadb');

/** The dialect of a MySQL-protocol server of this flavour. */
export function dialectOfServer(flavor: ServerFlavor): SqlDialect {
  return flavor === 'mariadb' ? MARIADB : MYSQL;
}

const isSqlite = (dataSource: DataSource) => dataSource.options.type === 'better-sqlite3';

/**
 * The dialect of a data source (or of the data source under a manager), as far as known without
 * asking: a MySQL-protocol server not yet identified gets MySQL's, which MariaDB speaks too
 * (without RETURNING). The injected dialect is {@link resolveDialect}'s.
 */
export function dialectOf(source: DataSource | EntityManager): SqlDialect {
  const connection = 'connection' in source ? source.connection : source;
  if (isSqlite(connection)) return SQLITE;
  return dialectOfServer(knownServerFlavor(connection) ?? 'mysql');
}

/**
 * The dialect of the server a data source is connected to, asking it which it is: by the server,
 * never by the data source's `type`, which says `mysql` for MariaDB as often as not.
 */
export async function resolveDialect(dataSource: DataSource): Promise<SqlDialect> {
  if (isSqlite(dataSource)) return SQLITE;
  return dialectOfServer((await identifyServer(dataSource)).flavor);
}

/** Splits rows into chunks small enough for one statement on every database. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** mysql2 gives BIGINT and COUNT(*) as strings; both databases give numbers elsewhere. */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** Runs a write statement inside the manager's transaction and answers the rows it changed. */
export async function execute(
  manager: EntityManager,
  sql: string,
  parameters: unknown[],
): Promise<number> {
  const runner = manager.queryRunner;
  if (!runner) throw new Error('execute() needs a transactional EntityManager');
  const result = await runner.query(sql, parameters, true);
  return result.affected ?? 0;
}
