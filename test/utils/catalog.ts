import type { DataSource } from 'typeorm';
import { query } from '../../src/storage/statements';

/*
 * What a database's own catalogue says of its tables, columns and indexes, for the specs of the
 * migrations: each database asked in its words, the answers in one shape.
 */

type Engine = 'sqlite' | 'mysql' | 'postgres';

function engineOf(dataSource: DataSource): Engine {
  const type = String(dataSource.options.type);
  if (type === 'better-sqlite3') return 'sqlite';
  if (type === 'postgres') return 'postgres';
  return 'mysql';
}

const inList = (names: readonly string[]) => names.map(() => '?').join(', ');

/** The table's columns, in their order. */
export async function columnsOf(dataSource: DataSource, table: string): Promise<string[]> {
  const sql = {
    sqlite: 'SELECT name FROM pragma_table_info(?) ORDER BY cid',
    mysql:
      'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position',
    postgres:
      'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position',
  }[engineOf(dataSource)];
  return (await query<{ name: string }>(dataSource, sql, [table])).map((row) => row.name);
}

/** Those of `names` that are tables of the database, sorted. */
export async function tablesAmong(dataSource: DataSource, names: string[]): Promise<string[]> {
  const sql = {
    sqlite: `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${inList(names)})`,
    mysql: `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (${inList(names)})`,
    postgres: `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN (${inList(names)})`,
  }[engineOf(dataSource)];
  return (await query<{ name: string }>(dataSource, sql, names)).map((row) => row.name).sort();
}

/** Every table of the database but the catalogue's own, sorted. */
export async function allTables(dataSource: DataSource): Promise<string[]> {
  const sql = {
    sqlite:
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    mysql:
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name',
    postgres:
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name',
  }[engineOf(dataSource)];
  return (await query<{ name: string }>(dataSource, sql)).map((row) => row.name);
}

/**
 * The table's secondary indexes (not its primary key's), sorted by name, each with its columns as
 * written, lower-cased ("space_id, sprint_id, points desc, reached_at, address_key"; an
 * expression as the database keeps it).
 */
export async function indexesOf(
  dataSource: DataSource,
  table: string,
): Promise<Array<{ name: string; columns: string }>> {
  const engine = engineOf(dataSource);
  let rows: Array<{ name: string; columns: string }>;
  if (engine === 'sqlite') {
    const found = await query<{ name: string; sql: string }>(
      dataSource,
      "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
      [table],
    );
    rows = found.map(({ name, sql }) => ({ name, columns: /\((.*)\)\s*$/s.exec(sql)![1] }));
  } else if (engine === 'mysql') {
    rows = await query(
      dataSource,
      `SELECT index_name AS name,
              GROUP_CONCAT(CONCAT(column_name, IF(collation = 'D', ' DESC', '')) ORDER BY seq_in_index SEPARATOR ', ') AS columns
         FROM information_schema.statistics
        WHERE table_schema = DATABASE() AND table_name = ? AND index_name <> 'PRIMARY'
        GROUP BY index_name`,
      [table],
    );
  } else {
    const found = await query<{ name: string; definition: string }>(
      dataSource,
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = ? AND indexname <> ?`,
      [table, `${table}_pkey`],
    );
    rows = found.map(({ name, definition }) => ({
      name,
      columns: /\((.*)\)\s*$/s.exec(definition)![1],
    }));
  }
  return rows
    .map(({ name, columns }) => ({
      name,
      columns: String(columns).replace(/\s+/g, ' ').trim().toLowerCase(),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}
