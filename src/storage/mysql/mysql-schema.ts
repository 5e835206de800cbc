import type { QueryRunner } from 'typeorm';
import type { CreatingMigration } from '../engine/database-engine';
import type { SchemaTarget } from '../engine/schema-target';
import {
  findProblems,
  MigrationRefusedError,
  SCHEMA_CHARSET,
  SERVER_REQUIREMENTS,
  ServerFacts,
  ServerRequirements,
} from '../schema/server-requirements';
import { identifyServer, ServerIdentity } from './server-flavor';

const inList = (values: readonly string[]) => values.map(() => '?').join(', ');

/** The rows of a read, typed. */
const select = <Row>(queryRunner: QueryRunner, sql: string, parameters?: unknown[]) =>
  queryRunner.query(sql, parameters) as Promise<Row[]>;

/**
 * The preflight on MySQL or MariaDB, by the server that answers (not the data source's type:
 * 'mysql' reaches MariaDB too). Each DDL statement commits at once there, so a migration that
 * failed half-way would leave a half-made schema that every retry then trips over: this checks
 * read-only that the server can take the whole migration and refuses before anything is created.
 */
export async function prepareMysqlSchema(
  queryRunner: QueryRunner,
  migration: CreatingMigration,
): Promise<SchemaTarget> {
  const server = await identifyServer(queryRunner);
  const needs = migration.requirementsFor(server.flavor);
  const facts = await serverFacts(queryRunner, server, needs, migration.creates);
  const problems = findProblems(facts, needs);
  if (problems.length > 0) {
    await dropEmptyBookkeeping(queryRunner);
    throw new MigrationRefusedError(migration.name, problems, facts.existingTables);
  }
  const collate = needs.keyCollation
    ? ` CHARACTER SET ${SCHEMA_CHARSET} COLLATE ${needs.keyCollation}`
    : '';
  return {
    key: (length) => `VARCHAR(${length})${collate}`,
    tableOptions: ` ENGINE=InnoDB DEFAULT CHARSET=${SCHEMA_CHARSET}`,
    sequenceKey: 'BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY',
    primaryKey: (columns) => columns,
    // InnoDB tables are clustered by their primary key already.
    clustered: '',
  };
}

async function serverFacts(
  queryRunner: QueryRunner,
  server: ServerIdentity,
  needs: ServerRequirements,
  creates: readonly string[],
): Promise<ServerFacts> {
  const [{ database }] = await select<{ database: string | null }>(
    queryRunner,
    'SELECT DATABASE() AS `database`',
  );
  const wanted = needs.keyCollation === undefined ? [] : [needs.keyCollation];
  const collations =
    wanted.length === 0
      ? []
      : await select<{ name: string; charset: string }>(
          queryRunner,
          `SELECT COLLATION_NAME AS name, CHARACTER_SET_NAME AS charset
             FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (${inList(wanted)})`,
          wanted,
        );
  const charsets = await select<{ name: string }>(
    queryRunner,
    'SELECT CHARACTER_SET_NAME AS name FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME = ?',
    [SCHEMA_CHARSET],
  );
  const engines = await select<{ support: string }>(
    queryRunner,
    "SELECT SUPPORT AS support FROM information_schema.ENGINES WHERE ENGINE = 'InnoDB'",
  );
  const existing = await select<{ name: string }>(
    queryRunner,
    `SELECT TABLE_NAME AS name FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (${inList(creates)}) ORDER BY TABLE_NAME`,
    [...creates],
  );
  return {
    product: SERVER_REQUIREMENTS[server.flavor].product,
    version: server.version,
    database,
    collations: new Map(collations.map((row) => [row.name, row.charset])),
    hasCharset: charsets.length > 0,
    innodb: engines[0]?.support ?? null,
    existingTables: existing.map((row) => row.name),
  };
}

/**
 * TypeORM creates its bookkeeping table before any migration runs. A refusal drops it again when
 * it is TypeORM's (its three columns) and records nothing, so a refused run leaves the database as
 * it found it.
 */
async function dropEmptyBookkeeping(queryRunner: QueryRunner): Promise<void> {
  const bookkeeping = queryRunner.connection.options.migrationsTableName ?? 'migrations';
  const columns = await select<{ name: string }>(
    queryRunner,
    `SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY COLUMN_NAME`,
    [bookkeeping],
  );
  if (columns.map((column) => column.name).join() !== 'id,name,timestamp') return;
  const [{ n }] = await select<{ n: number | string }>(
    queryRunner,
    `SELECT COUNT(*) AS n FROM \`${bookkeeping}\``,
  );
  if (Number(n) === 0) await queryRunner.query(`DROP TABLE \`${bookkeeping}\``);
}
