import type { QueryRunner } from 'typeorm';
import { TableMigration } from '../../../storage/migrations/table-migration';

/**
 * Points uploads of the dashboard: a file of grants and deductions is read and kept for its
 * preview, then applied. Its lines are rows of their own, read back in order to be applied in
 * parts; they are dropped when the upload expires, its summary stays.
 */
export class PointsUploads1764600000001 extends TableMigration {
  name = 'PointsUploads1764600000001';
  protected readonly creates = ['points_uploads', 'points_upload_lines'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { tableOptions: table } = await this.prepare(queryRunner);
    for (const statement of [
      `CREATE TABLE points_uploads (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        space_id INTEGER NOT NULL,
        account_id VARCHAR(36) NOT NULL,
        created_at BIGINT NOT NULL,
        name VARCHAR(255) NOT NULL,
        content_sha256 VARCHAR(64) NOT NULL,
        format VARCHAR(8) NOT NULL,
        reason VARCHAR(200) NULL,
        occurred_at BIGINT NULL,
        line_count INTEGER NOT NULL,
        error_count INTEGER NOT NULL,
        points_granted BIGINT NOT NULL,
        points_deducted BIGINT NOT NULL,
        status VARCHAR(16) NOT NULL,
        progress INTEGER NOT NULL DEFAULT 0,
        heartbeat_at BIGINT NULL,
        applied_count INTEGER NULL,
        unchanged_count INTEGER NULL,
        refused_count INTEGER NULL,
        applied_at BIGINT NULL,
        applied_by VARCHAR(36) NULL,
        failure VARCHAR(300) NULL,
        expired_at BIGINT NULL)${table}`,
      `CREATE INDEX ix_points_uploads_space ON points_uploads (space_id, created_at)`,
      `CREATE TABLE points_upload_lines (
        upload_id VARCHAR(36) NOT NULL,
        line INTEGER NOT NULL,
        address VARCHAR(128) NULL,
        points INTEGER NULL,
        reason VARCHAR(200) NULL,
        occurred_at BIGINT NULL,
        error VARCHAR(300) NULL,
        refusal VARCHAR(300) NULL,
        PRIMARY KEY (upload_id, line))${table}`,
    ]) {
      await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE points_upload_lines');
    await queryRunner.query('DROP TABLE points_uploads');
  }
}
