import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

/**
 * Many teams on one deployment. Access tokens may belong to one space (`space_id`; NULL, as every
 * token made before this, is a deployment token that reaches every space), expire (`expires_at`,
 * epoch ms), remember where they were last used from (`last_used_from`) and which token a
 * rotation replaced them with (`replaced_by`). Spaces may be private (`is_private`): read only by
 * their own tokens and deployment tokens.
 */
export class SpaceTokens1764400000000 implements MigrationInterface {
  name = 'SpaceTokens1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const statements = [
      'ALTER TABLE access_tokens ADD COLUMN space_id INTEGER NULL',
      'ALTER TABLE access_tokens ADD COLUMN last_used_from VARCHAR(45) NULL',
      'ALTER TABLE access_tokens ADD COLUMN expires_at BIGINT NULL',
      'ALTER TABLE access_tokens ADD COLUMN replaced_by VARCHAR(36) NULL',
      'CREATE INDEX ix_access_tokens_space ON access_tokens (space_id)',
      'ALTER TABLE spaces ADD COLUMN is_private BOOLEAN NOT NULL DEFAULT 0',
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = dialectOf(queryRunner.connection).kind === 'mysql';
    const statements = [
      'ALTER TABLE spaces DROP COLUMN is_private',
      // SQLite drops no indexed column: the index goes first.
      mysql
        ? 'DROP INDEX ix_access_tokens_space ON access_tokens'
        : 'DROP INDEX ix_access_tokens_space',
      'ALTER TABLE access_tokens DROP COLUMN replaced_by',
      'ALTER TABLE access_tokens DROP COLUMN expires_at',
      'ALTER TABLE access_tokens DROP COLUMN last_used_from',
      'ALTER TABLE access_tokens DROP COLUMN space_id',
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }
}
