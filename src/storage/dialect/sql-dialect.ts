import type { DataSource, EntityManager } from 'typeorm';

export type Dialect = 'sqlite' | 'mysql';

/** The two SQL dialects the service speaks: better-sqlite3 and mysql2 (MySQL or MariaDB). */
export function dialectOf(source: DataSource | EntityManager): Dialect {
  const connection = 'connection' in source ? source.connection : source;
  return connection.options.type === 'better-sqlite3' ? 'sqlite' : 'mysql';
}

function valuesClause(columns: readonly string[], rows: number): string {
  const row = `(${columns.map(() => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** A plain INSERT of `rows` rows. */
export function insertSql(table: string, columns: readonly string[], rows: number): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${valuesClause(columns, rows)}`;
}

/** INSERT that skips rows whose key already exists. */
export function insertIgnoreSql(
  dialect: Dialect,
  table: string,
  columns: readonly string[],
  rows: number,
): string {
  const verb = dialect === 'sqlite' ? 'INSERT OR IGNORE' : 'INSERT IGNORE';
  return `${verb} INTO ${table} (${columns.join(', ')}) VALUES ${valuesClause(columns, rows)}`;
}

/**
 * INSERT ... or update on key conflict. `updates` names each column to overwrite with the new
 * value ('set'), to add the new value to ('add') or to keep the greater of both ('max').
 */
export function upsertSql(
  dialect: Dialect,
  table: string,
  columns: readonly string[],
  keyColumns: readonly string[],
  updates: Readonly<Record<string, 'set' | 'add' | 'max'>>,
  rows: number,
): string {
  const insert = insertSql(table, columns, rows);
  const assignments = Object.entries(updates).map(([column, how]) => {
    const incoming = dialect === 'sqlite' ? `excluded.${column}` : `VALUES(${column})`;
    const current = dialect === 'sqlite' ? `${table}.${column}` : column;
    const value =
      how === 'add'
        ? `${current} + ${incoming}`
        : how === 'max'
          ? `${dialect === 'sqlite' ? 'MAX' : 'GREATEST'}(${current}, ${incoming})`
          : incoming;
    return `${column} = ${value}`;
  });
  return dialect === 'sqlite'
    ? `${insert} ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${assignments.join(', ')}`
    : `${insert} ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`;
}

/** Splits rows into chunks small enough for one statement on both databases. */
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
