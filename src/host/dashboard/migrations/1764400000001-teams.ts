import type { QueryRunner } from 'typeorm';
import { dialectOf } from '../../../storage/engines';
import { TableMigration } from '../../../storage/migrations/table-migration';

/**
 * Many teams on one deployment: accounts get a name, an operator flag and a disabled time;
 * spaces get members with roles, invitations and an audit trail. Every admin there was becomes an
 * operator, so an existing deployment keeps working as it did.
 */
export class Teams1764400000001 extends TableMigration {
  name = 'Teams1764400000001';
  protected readonly creates = ['space_members', 'invitations', 'audit_log'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { tableOptions: table } = await this.prepare(queryRunner);
    const dialect = dialectOf(queryRunner);
    for (const statement of [
      `CREATE TABLE space_members (
        space_id INTEGER NOT NULL,
        account_id VARCHAR(36) NOT NULL,
        role VARCHAR(16) NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (space_id, account_id))${table}`,
      `CREATE INDEX ix_space_members_account ON space_members (account_id)`,
      `CREATE TABLE invitations (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        token_hash VARCHAR(64) NOT NULL,
        space_id INTEGER NOT NULL,
        email VARCHAR(254) NOT NULL,
        role VARCHAR(16) NOT NULL,
        invited_by VARCHAR(36) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        closed_at BIGINT NULL)${table}`,
      `CREATE UNIQUE INDEX ux_invitations_token ON invitations (token_hash)`,
      `CREATE INDEX ix_invitations_space ON invitations (space_id)`,
      `CREATE TABLE audit_log (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        at BIGINT NOT NULL,
        actor_id VARCHAR(36) NULL,
        actor VARCHAR(254) NOT NULL,
        action VARCHAR(64) NOT NULL,
        space_id INTEGER NULL,
        target VARCHAR(254) NULL,
        detail VARCHAR(1000) NULL,
        address VARCHAR(45) NULL)${table}`,
      `CREATE INDEX ix_audit_log_space ON audit_log (space_id, id)`,
      `ALTER TABLE admins ADD COLUMN name VARCHAR(100) NULL`,
      `ALTER TABLE admins ADD COLUMN is_operator BOOLEAN NOT NULL DEFAULT ${dialect.booleanLiteral(false)}`,
      `ALTER TABLE admins ADD COLUMN disabled_at BIGINT NULL`,
      `UPDATE admins SET is_operator = ${dialect.booleanLiteral(true)}`,
    ]) {
      await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE audit_log');
    await queryRunner.query('DROP TABLE invitations');
    await queryRunner.query('DROP TABLE space_members');
    for (const column of ['disabled_at', 'is_operator', 'name']) {
      await queryRunner.query(`ALTER TABLE admins DROP COLUMN ${column}`);
    }
  }
}
