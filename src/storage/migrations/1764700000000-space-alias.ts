import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../engines';

const ALIAS_INDEX = 'ux_spaces_alias';

/**
 * A space's alias (`spaces.alias`): the second, readable name clients of Galxe's API look a space up
 * by under the `galxe` schema profile. NULL for every space before this, and for any without one;
 * unique among those that have one (every database lets a unique index hold many NULLs).
 */
export class SpaceAlias1764700000000 implements MigrationInterface {
  name = 'SpaceAlias1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // MySQL commits DDL at once: a run that failed after this step finds the column there.
    if (!(await queryRunner.hasColumn('spaces', 'alias')))
      await queryRunner.query('ALTER TABLE spaces ADD COLUMN alias VARCHAR(64) NULL');
    if (!(await hasAliasIndex(queryRunner)))
      await queryRunner.query(`CREATE UNIQUE INDEX ${ALIAS_INDEX} ON spaces (alias)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // SQLite drops no indexed column: the index goes first.
    if (await hasAliasIndex(queryRunner))
      await queryRunner.query(dialectOf(queryRunner).dropIndex('spaces', ALIAS_INDEX));
    if (await queryRunner.hasColumn('spaces', 'alias'))
      await queryRunner.query('ALTER TABLE spaces DROP COLUMN alias');
  }
}

async function hasAliasIndex(queryRunner: QueryRunner): Promise<boolean> {
  const table = await queryRunner.getTable('spaces');
  return table?.indices.some((index) => index.name === ALIAS_INDEX) ?? false;
}
