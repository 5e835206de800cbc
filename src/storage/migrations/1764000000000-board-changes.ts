import type { QueryRunner } from 'typeorm';
import { TableMigration } from './table-migration';

/**
 * board_changes: the sequence of board writes that every instance tails to keep its rank indexes
 * fresh. SQLite's AUTOINCREMENT (not a plain rowid) so that a sequence number is never handed out
 * twice, even once every row has been pruned.
 */
export class BoardChanges1764000000000 extends TableMigration {
  name = 'BoardChanges1764000000000';
  protected readonly creates = ['board_changes'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { key, tableOptions, sequenceKey } = await this.prepare(queryRunner);
    await queryRunner.query(
      `CREATE TABLE board_changes (
        seq ${sequenceKey},
        space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        address_key ${key(128)} NULL,
        points BIGINT NOT NULL,
        reached_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL)${tableOptions}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE board_changes');
  }
}
