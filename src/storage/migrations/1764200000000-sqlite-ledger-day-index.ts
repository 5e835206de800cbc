import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

/**
 * SQLite only: the ledger's time index keys events by (space, day) instead of (space, exact time).
 * It serves one query, a sprint board's rebuild from the events in its window (PointsLedgerService
 * .rebuildSprintBoard), which reads whole days and filters the exact window.
 *
 * Why: on a WITHOUT ROWID table an index entry ends with the primary key, so entries of one day
 * lie in key order. Senders' keys mostly grow (counters, time-ordered ids), so each commit appends
 * near the end of each day it touches. Keyed by exact time, events that arrive out of time order
 * (a backfill, a shuffled export) landed all over the index, and every commit rewrote a page per
 * event: at 1,000,000 events over four weeks in random order, about a third of the pages an
 * ingest commit wrote. bench/ingest.js (1,000,000 records, four weeks in random order), before
 * and after: `import` 50,600 and 61,600 records/s, POST /ingest 20,800 and 26,700.
 *
 * MySQL/MariaDB keep (space_id, occurred_at): they meet their targets with it, and a day index
 * was not measured there.
 */
export class SqliteLedgerDayIndex1764200000000 implements MigrationInterface {
  name = 'SqliteLedgerDayIndex1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner.connection).kind !== 'sqlite') return;
    // IF (NOT) EXISTS: run without a transaction and stopped half-way, it can run again.
    await queryRunner.query('DROP INDEX IF EXISTS ix_points_events_space_time');
    // Integer division: occurred_at is an integer (epoch milliseconds); it truncates toward 0.
    await queryRunner.query(
      'CREATE INDEX IF NOT EXISTS ix_points_events_space_day ON points_events (space_id, occurred_at / 86400000)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (dialectOf(queryRunner.connection).kind !== 'sqlite') return;
    await queryRunner.query('DROP INDEX IF EXISTS ix_points_events_space_day');
    await queryRunner.query(
      'CREATE INDEX IF NOT EXISTS ix_points_events_space_time ON points_events (space_id, occurred_at)',
    );
  }
}
