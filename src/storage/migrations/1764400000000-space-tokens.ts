import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { SqlDialect } from '../dialect/sql-dialect';
import { dialectOf } from '../engines';

/** One schema change of this migration: what it adds, and how to add and drop it. */
interface Step {
  table: string;
  /** A column (or, with `index`, an index) the step adds. */
  name: string;
  index?: true;
  add: (dialect: SqlDialect) => string;
  drop: (dialect: SqlDialect) => string;
}

const column = (
  table: string,
  name: string,
  definition: string | ((dialect: SqlDialect) => string),
): Step => ({
  table,
  name,
  add: (dialect) =>
    `ALTER TABLE ${table} ADD COLUMN ${name} ${typeof definition === 'string' ? definition : definition(dialect)}`,
  drop: () => `ALTER TABLE ${table} DROP COLUMN ${name}`,
});

const STEPS: readonly Step[] = [
  column('access_tokens', 'space_id', 'INTEGER NULL'),
  column('access_tokens', 'last_used_from', 'VARCHAR(45) NULL'),
  column('access_tokens', 'expires_at', 'BIGINT NULL'),
  column('access_tokens', 'replaced_by', 'VARCHAR(36) NULL'),
  {
    table: 'access_tokens',
    name: 'ix_access_tokens_space',
    index: true,
    add: () => 'CREATE INDEX ix_access_tokens_space ON access_tokens (space_id)',
    drop: (dialect) => dialect.dropIndex('access_tokens', 'ix_access_tokens_space'),
  },
  column(
    'spaces',
    'is_private',
    (dialect) => `BOOLEAN NOT NULL DEFAULT ${dialect.booleanLiteral(false)}`,
  ),
];

/**
 * Many teams on one deployment. Access tokens may belong to one space (`space_id`; NULL, as every
 * token made before this, is a deployment token that reaches every space), expire (`expires_at`,
 * epoch ms), remember where they were last used from (`last_used_from`) and which token a
 * rotation replaced them with (`replaced_by`). Spaces may be private (`is_private`): read only by
 * their own tokens and deployment tokens.
 *
 * MySQL and MariaDB commit each DDL statement at once, so an attempt that failed part-way leaves
 * some of these behind; each step looks first and adds (or drops) only what is missing (or there),
 * so the migration runs again to the end.
 */
export class SpaceTokens1764400000000 implements MigrationInterface {
  name = 'SpaceTokens1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = dialectOf(queryRunner);
    const present = await presentIn(queryRunner);
    for (const step of STEPS) {
      if (!present.has(key(step))) await queryRunner.query(step.add(dialect));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const dialect = dialectOf(queryRunner);
    const present = await presentIn(queryRunner);
    // Reverse order: SQLite drops no indexed column, so the index goes before space_id.
    for (const step of [...STEPS].reverse()) {
      if (present.has(key(step))) await queryRunner.query(step.drop(dialect));
    }
  }
}

const key = (step: Pick<Step, 'table' | 'name' | 'index'>) =>
  `${step.table}.${step.index ? 'index' : 'column'}.${step.name}`;

/** Which of the steps' columns and indexes exist now, read from the database's own catalogue. */
async function presentIn(queryRunner: QueryRunner): Promise<Set<string>> {
  const present = new Set<string>();
  for (const name of [...new Set(STEPS.map((step) => step.table))]) {
    const table = await queryRunner.getTable(name);
    // Lower-cased: MySQL may answer in capitals.
    for (const column of table?.columns ?? [])
      present.add(key({ table: name, name: column.name.toLowerCase() }));
    for (const index of table?.indices ?? [])
      if (index.name)
        present.add(key({ table: name, name: index.name.toLowerCase(), index: true }));
  }
  return present;
}
