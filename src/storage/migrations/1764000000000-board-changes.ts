import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

/**
 * board_changes: the sequence of board writes that every instance tails to keep its rank indexes
 * fresh. SQLite's AUTOINCREMENT (not a plain rowid) so that a sequence number is never handed out
 * twice, even once every row has been pruned.
 */
export class BoardChanges1764000000000 implements MigrationInterface {
  name = 'BoardChanges1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = dialectOf(queryRunner.connection).kind === 'mysql';
    const binary =
      queryRunner.connection.options.type === 'mariadb' ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
    await queryRunner.query(
      `CREATE TABLE board_changes (
        seq ${mysql ? 'BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL'},
        space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        address_key ${mysql ? `VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${binary}` : 'VARCHAR(128)'} NULL,
        points BIGINT NOT NULL,
        reached_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL)${mysql ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4' : ''}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE board_changes');
  }
}
