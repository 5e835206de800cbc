import type { QueryRunner } from 'typeorm';
import { TableMigration } from './table-migration';

/**
 * board_rank_buckets: per board, an order-statistic layer over board_entries in SQL (see
 * src/leaderboards/rank-buckets). Each row is a bucket: a lower bound in rank order (points,
 * reached_at, address_key; the head bucket's bound precedes every entry) and how many entries of
 * the board (points > 0) lie from it up to the next bucket's bound. The primary key is in rank
 * order (ascending on PostgreSQL, whose primary keys cannot be descending: the few buckets of a
 * board are then sorted), so the buckets before a key are an index range. A board without rows is one implicit
 * bucket: readers count ahead as before, and the first write builds its head bucket.
 *
 * boards.bucket_layout counts the changes of a board's bucket bounds (a split, a drop, the head
 * made, a rebuild): a MySQL writer that finds the layout it knows moves counts by the bounds it
 * keeps, without reading them again (see DirectBoardTotalsStore.boardWritten).
 *
 * board_entries.prior_reached_at: reached_at as the entry's latest upsert found it, set by that
 * upsert (MySQL/MariaDB), so that the writer knows the entry's old rank key without a second
 * statement. Both columns are added in place (MariaDB and MySQL 8 add a column with a default
 * without copying the table; SQLite only writes the schema).
 */
export class BoardRankBuckets1764500000000 extends TableMigration {
  name = 'BoardRankBuckets1764500000000';
  protected readonly creates = ['board_rank_buckets'];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { key, tableOptions, primaryKey, clustered } = await this.prepare(queryRunner);
    await queryRunner.query(
      `CREATE TABLE board_rank_buckets (
        space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        points BIGINT NOT NULL,
        reached_at BIGINT NOT NULL,
        address_key ${key(128)} NOT NULL,
        entry_count INTEGER NOT NULL,
        PRIMARY KEY (${primaryKey('space_id, sprint_id, points DESC, reached_at, address_key')}))${tableOptions}${clustered}`,
    );
    await queryRunner.query(
      'ALTER TABLE boards ADD COLUMN bucket_layout INTEGER NOT NULL DEFAULT 0',
    );
    await queryRunner.query(
      'ALTER TABLE board_entries ADD COLUMN prior_reached_at BIGINT NOT NULL DEFAULT 0',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE board_entries DROP COLUMN prior_reached_at');
    await queryRunner.query('ALTER TABLE boards DROP COLUMN bucket_layout');
    await queryRunner.query('DROP TABLE board_rank_buckets');
  }
}
