import type { QueryRunner } from 'typeorm';
import type { CreatingMigration } from '../engine/database-engine';
import type { SchemaTarget } from '../engine/schema-target';
import { findProblems, MigrationRefusedError, ServerFacts } from '../schema/server-requirements';

const inList = (values: readonly string[]) => values.map(() => '?').join(', ');

/** SQLite's DDL: keys in its default BINARY collation, tables without options. */
export const SQLITE_SCHEMA: SchemaTarget = {
  key: (length) => `VARCHAR(${length})`,
  tableOptions: '',
  // AUTOINCREMENT, not a plain rowid: a number is never handed out twice, even once every row
  // has been deleted.
  sequenceKey: 'INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL',
  primaryKey: (columns) => columns,
  clustered: ' WITHOUT ROWID',
};

/**
 * The preflight on SQLite: its version, and tables the migration would create. A refused
 * migration's transaction is rolled back, so nothing needs undoing.
 */
export async function prepareSqliteSchema(
  queryRunner: QueryRunner,
  migration: CreatingMigration,
): Promise<SchemaTarget> {
  const [{ version }] = (await queryRunner.query('SELECT sqlite_version() AS version')) as Array<{
    version: string;
  }>;
  const existing = (await queryRunner.query(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${inList(migration.creates)}) ORDER BY name`,
    [...migration.creates],
  )) as Array<{ name: string }>;
  const facts: ServerFacts = {
    product: 'SQLite',
    version,
    database: 'main',
    collations: new Map(),
    hasCharset: true,
    innodb: null,
    existingTables: existing.map((row) => row.name),
  };
  const problems = findProblems(facts, migration.requirementsFor('sqlite'));
  if (problems.length > 0)
    throw new MigrationRefusedError(migration.name, problems, facts.existingTables);
  return SQLITE_SCHEMA;
}
