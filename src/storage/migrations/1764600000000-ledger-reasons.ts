import type { MigrationInterface, QueryRunner } from 'typeorm';

const ADDRESS_INDEX = 'ix_points_events_address';

/**
 * Why points were granted or deducted: the ledger keeps each record's optional `reason` (the
 * dashboard's grants, deductions and uploads require one), NULL for every event before this. And
 * one address's entries in a space, newest first (the dashboard's address page), read through
 * `ix_points_events_address` instead of a scan of the space's whole ledger.
 */
export class LedgerReasons1764600000000 implements MigrationInterface {
  name = 'LedgerReasons1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // MySQL commits DDL at once: a run that failed after this step finds the column there.
    if (!(await queryRunner.hasColumn('points_events', 'reason')))
      await queryRunner.query('ALTER TABLE points_events ADD COLUMN reason VARCHAR(200) NULL');
    const table = await queryRunner.getTable('points_events');
    if (!table?.indices.some((index) => index.name === ADDRESS_INDEX))
      await queryRunner.query(
        `CREATE INDEX ${ADDRESS_INDEX} ON points_events (space_id, address_key, occurred_at)`,
      );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('points_events');
    if (table?.indices.some((index) => index.name === ADDRESS_INDEX))
      await queryRunner.dropIndex('points_events', ADDRESS_INDEX);
    if (await queryRunner.hasColumn('points_events', 'reason'))
      await queryRunner.query('ALTER TABLE points_events DROP COLUMN reason');
  }
}
