import type { QueryRunner } from 'typeorm';
import { TableMigration } from '../../../storage/migrations/table-migration';

/** Dashboard administrators and their sign-in sessions (our host's, not the module's). */
export class Dashboard1763800000000 extends TableMigration {
  name = 'Dashboard1763800000000';
  protected readonly creates = ['admins', 'admin_sessions'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { tableOptions: table } = await this.prepare(queryRunner);
    for (const statement of [
      `CREATE TABLE admins (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        email VARCHAR(254) NOT NULL,
        password_hash VARCHAR(255) NOT NULL,
        created_at BIGINT NOT NULL)${table}`,
      `CREATE UNIQUE INDEX ux_admins_email ON admins (email)`,
      `CREATE TABLE admin_sessions (
        token_hash VARCHAR(64) NOT NULL PRIMARY KEY,
        admin_id VARCHAR(36) NOT NULL,
        csrf_token VARCHAR(64) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL)${table}`,
      `CREATE INDEX ix_admin_sessions_admin ON admin_sessions (admin_id)`,
    ]) {
      await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE admin_sessions');
    await queryRunner.query('DROP TABLE admins');
  }
}
