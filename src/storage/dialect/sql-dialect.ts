import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** Which database engine a dialect speaks: for storage's own code only (a lint rule keeps it so). */
export type DatabaseEngineName = 'sqlite' | 'mysql' | 'postgres';

/** Where a statement runs: a data source (any pooled connection), a manager, or a query runner. */
export type Queryable = DataSource | EntityManager | QueryRunner;

/** A row as a statement answers it, by output name. */
export type SqlRow = Record<string, unknown>;

/**
 * How a column is updated on a key conflict: overwritten, added to, kept at the greater, or set to
 * another column's value as the row held it before this statement (`{ priorOf }`).
 */
export type ConflictUpdate = 'set' | 'add' | 'max' | { priorOf: string };

/** The isolation level of a write transaction, as TypeORM names it. */
export type WriteIsolation = 'READ COMMITTED' | 'REPEATABLE READ';

/**
 * The SQL differences between the databases the module runs on, chosen once per data source (see
 * dialectOf in storage/dialects.ts). The library writes its statements once, in house SQL (`?`
 * placeholders, camelCase output names: docs/adr/0004); a dialect runs them, and spells what
 * differs: upserts, locks, index hints, RETURNING. Feature code asks it for syntax; it never asks
 * which database it is on.
 */
export interface SqlDialect {
  /** For storage's own code (the migrations that reshape one engine's tables) and messages. */
  readonly engine: DatabaseEngineName;
  /** The product as messages name it: SQLite, MySQL, MariaDB or PostgreSQL. */
  readonly product: string;
  /**
   * Whether writers run at once and lock rows (MySQL/MariaDB, PostgreSQL). SQLite's single writer
   * holds the whole database, so its locking reads are plain reads.
   */
  readonly rowLocks: boolean;
  /** Whether an upsert can answer the rows it wrote (`RETURNING`: all but MySQL). */
  readonly upsertReturning: boolean;
  /**
   * The isolation of write transactions where writers run at once: REPEATABLE READ on MySQL and
   * MariaDB, whose gap locks keep two first writers of one new key apart; READ COMMITTED on
   * PostgreSQL, where every statement sees what committed before it and a locking read waits for
   * the row's writer and reads its commit (REPEATABLE READ would fail such a read instead).
   */
  readonly writeIsolation: WriteIsolation;
  /** Runs one statement of house SQL and answers its rows (none for a write without RETURNING). */
  query<Row = SqlRow>(source: Queryable, sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs one write statement of house SQL and answers how many rows it changed. */
  execute(source: Queryable, sql: string, params?: readonly unknown[]): Promise<number>;
  /** INSERT that skips rows whose key already exists. */
  insertIgnore(table: string, columns: readonly string[], rows: number): string;
  /** INSERT ... or update the listed columns on a conflict of `keyColumns`. */
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
  /** DROP INDEX, in this database's words. */
  dropIndex(table: string, index: string): string;
  /**
   * A statement that holds a lock on `key` to the end of the transaction, so that writers that
   * check for a row and then insert one under the same key queue instead of both passing; none
   * where the check's own locking read does that (SQLite's single writer, MySQL's gap locks at
   * REPEATABLE READ). PostgreSQL's READ COMMITTED locks only rows that exist: a transaction
   * advisory lock.
   */
  keyLock(key: string): { sql: string; params: unknown[] } | undefined;
  /**
   * A boolean constant as this database writes it in DDL and statements: 0 and 1 where BOOLEAN is
   * an integer (SQLite, MySQL: TypeORM compares the column default as such), TRUE and FALSE on
   * PostgreSQL.
   */
  booleanLiteral(value: boolean): string;
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
 * and PostgreSQL read every value as the row was.
 */
export function conflictAssignments(
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

/** Splits rows into chunks small enough for one statement on every database. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/**
 * A number read from a driver: mysql2 gives DECIMAL sums (and BIGINT past 2^53) as text, and
 * every driver gives numbers elsewhere.
 */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** The data source a statement's source belongs to. */
export function dataSourceOf(source: Queryable): DataSource {
  return 'connection' in source ? source.connection : source;
}

/** The query runner a statement must run on (a transaction's), if the source is bound to one. */
export function queryRunnerOf(source: Queryable): QueryRunner | undefined {
  // By shape: a host may load a second copy of TypeORM, whose classes `instanceof` would miss.
  if ('createQueryRunner' in source) return undefined;
  if ('connect' in source) return source;
  return source.queryRunner ?? undefined;
}
