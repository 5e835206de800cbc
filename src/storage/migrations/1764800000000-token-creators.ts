import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who created each token (`created_by`: the host's name for its user, such as the dashboard's
 * account id, or `cli`), so that the remaining owners can tell a removed member's tokens apart and
 * removing a member can revoke them. NULL for every token made before this.
 */
export class TokenCreators1764800000000 implements MigrationInterface {
  name = 'TokenCreators1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (!(await queryRunner.hasColumn('access_tokens', 'created_by')))
      await queryRunner.query('ALTER TABLE access_tokens ADD COLUMN created_by VARCHAR(64) NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasColumn('access_tokens', 'created_by'))
      await queryRunner.query('ALTER TABLE access_tokens DROP COLUMN created_by');
  }
}
