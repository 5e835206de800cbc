import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access tokens get scopes (a comma-separated, sorted list). Every token created before this
 * could query, and only query: it gets `query`.
 */
export class TokenScopes1763900000000 implements MigrationInterface {
  name = 'TokenScopes1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE access_tokens ADD COLUMN scopes VARCHAR(64) NOT NULL DEFAULT 'query'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE access_tokens DROP COLUMN scopes');
  }
}
