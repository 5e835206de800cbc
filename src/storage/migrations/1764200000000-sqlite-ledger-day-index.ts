import type { QueryRunner } from 'typeorm';
import { OneEngineMigration } from './one-engine-migration';

/**
 * SQLite only: the ledger's time index keys events by (space, day), for sprint rebuilds, which read
 * whole days. Within a day entries follow the (mostly growing) key, so events out of time order
 * append near each day's end instead of rewriting a page each per commit.
 */
export class SqliteLedgerDayIndex1764200000000 extends OneEngineMigration {
  name = 'SqliteLedgerDayIndex1764200000000';
  protected readonly engine = 'sqlite';
  protected readonly purpose = 'keys the ledger time index by day';

  protected async reshape(queryRunner: QueryRunner): Promise<void> {
    // IF (NOT) EXISTS: run without a transaction and stopped half-way, it can run again.
    await queryRunner.query('DROP INDEX IF EXISTS ix_points_events_space_time');
    // Integer division: occurred_at is an integer (epoch milliseconds); it truncates toward 0.
    await queryRunner.query(
      'CREATE INDEX IF NOT EXISTS ix_points_events_space_day ON points_events (space_id, occurred_at / 86400000)',
    );
  }

  protected async undo(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX IF EXISTS ix_points_events_space_day');
    await queryRunner.query(
      'CREATE INDEX IF NOT EXISTS ix_points_events_space_time ON points_events (space_id, occurred_at)',
    );
  }
}
