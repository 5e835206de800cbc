import type { MigrationInterface, QueryRunner } from 'typeorm';
import { identifyServer, ServerFlavor, ServerIdentity } from '../dialect/server-flavor';
import {
  findProblems,
  SCHEMA_CHARSET,
  SERVER_REQUIREMENTS,
  ServerFacts,
  ServerRequirements,
} from './server-requirements';

/** A migration refused by its preflight: nothing of it was applied. */
export class MigrationRefusedError extends Error {
  override readonly name = 'MigrationRefusedError';

  constructor(
    readonly migration: string,
    readonly problems: readonly string[],
  ) {
    super(`Migration ${migration} refused before changing anything: ${problems.join('; ')}.`);
  }
}

/** How this server's DDL is written, as a {@link TableMigration} found it. */
export interface SchemaTarget {
  /** A key column of this length, in the key collation (see ServerRequirements.keyCollation). */
  readonly key: (length: number) => string;
  /** What every CREATE TABLE ends with. */
  readonly tableOptions: string;
}

/**
 * A migration that creates tables. MySQL and MariaDB commit each DDL statement at once, so one
 * that fails half-way leaves a half-made schema that every retry then trips over; up() calls
 * {@link prepare} first, which checks read-only that the server can take the whole migration and
 * refuses before anything is created.
 */
export abstract class TableMigration implements MigrationInterface {
  abstract readonly name: string;
  /** The tables up() creates: one already there, with no record of this migration, is refused. */
  protected abstract readonly creates: readonly string[];

  abstract up(queryRunner: QueryRunner): Promise<void>;
  abstract down(queryRunner: QueryRunner): Promise<void>;

  /**
   * What the schema needs of a server of this kind, and how it is written there. A hook: a spec
   * can ask for the other flavour's, or for a collation no server has.
   */
  protected requirementsFor(server: ServerFlavor | 'sqlite'): ServerRequirements {
    return SERVER_REQUIREMENTS[server];
  }

  /** The preflight: throws {@link MigrationRefusedError} when the migration cannot run here. */
  protected async prepare(queryRunner: QueryRunner): Promise<SchemaTarget> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    // By the server that answers, not the data source's type ('mysql' reaches MariaDB too).
    const server = sqlite ? undefined : await identifyServer(queryRunner);
    const needs = this.requirementsFor(server?.flavor ?? 'sqlite');
    const facts = server
      ? await serverFacts(queryRunner, server, needs, this.creates)
      : await sqliteFacts(queryRunner, this.creates);
    const problems = findProblems(facts, needs);
    if (problems.length > 0) {
      if (server) await dropEmptyBookkeeping(queryRunner);
      throw new MigrationRefusedError(this.name, problems);
    }
    if (!server) return { key: (length) => `VARCHAR(${length})`, tableOptions: '' };
    const collate = needs.keyCollation
      ? ` CHARACTER SET ${SCHEMA_CHARSET} COLLATE ${needs.keyCollation}`
      : '';
    return {
      key: (length) => `VARCHAR(${length})${collate}`,
      tableOptions: ` ENGINE=InnoDB DEFAULT CHARSET=${SCHEMA_CHARSET}`,
    };
  }
}

const inList = (values: readonly string[]) => values.map(() => '?').join(', ');

/** The rows of a read, typed. */
const select = <Row>(queryRunner: QueryRunner, sql: string, parameters?: unknown[]) =>
  queryRunner.query(sql, parameters) as Promise<Row[]>;

async function sqliteFacts(queryRunner: QueryRunner, creates: readonly string[]) {
  const [{ version }] = await select<{ version: string }>(
    queryRunner,
    'SELECT sqlite_version() AS version',
  );
  const existing = await select<{ name: string }>(
    queryRunner,
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${inList(creates)}) ORDER BY name`,
    [...creates],
  );
  return {
    product: 'SQLite',
    version,
    database: 'main',
    collations: new Map(),
    hasCharset: true,
    innodb: null,
    existingTables: existing.map((row) => row.name),
  } satisfies ServerFacts;
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
 * it found it (SQLite needs none of this: a refused migration's transaction is rolled back).
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
