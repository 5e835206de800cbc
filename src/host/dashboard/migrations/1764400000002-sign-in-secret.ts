import type { QueryRunner } from 'typeorm';
import { TableMigration } from '../../../storage/migrations/table-migration';

/** The host's shared secrets, first the key that signs the sign-in form's CSRF pairs. */
export class SignInSecret1764400000002 extends TableMigration {
  name = 'SignInSecret1764400000002';
  protected readonly creates = ['host_secrets'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { tableOptions: table } = await this.prepare(queryRunner);
    await queryRunner.query(
      `CREATE TABLE host_secrets (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        value VARCHAR(255) NOT NULL)${table}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE host_secrets');
  }
}
