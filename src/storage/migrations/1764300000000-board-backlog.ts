import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * boards.unfolded_since: per board, the lowest board_changes sequence number whose entry state may
 * not be in board_entries yet (NULL: board_entries holds every change of the board). SQLite's
 * writer leaves most entry changes in board_changes and folds them into board_entries later, many
 * at once (see BoardBacklog); MySQL/MariaDB write board_entries at once and never set it.
 */
export class BoardBacklog1764300000000 implements MigrationInterface {
  name = 'BoardBacklog1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE boards ADD COLUMN unfolded_since BIGINT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE boards DROP COLUMN unfolded_since');
  }
}
