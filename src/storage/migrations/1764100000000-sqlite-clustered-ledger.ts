import type { QueryRunner } from 'typeorm';
import { OneEngineMigration } from './one-engine-migration';

/** The two tables every points record writes, as the initial schema made them on SQLite. */
const TABLES = {
  points_events: {
    columns: `event_key VARCHAR(191) NOT NULL PRIMARY KEY,
        space_id INTEGER NOT NULL,
        address_key VARCHAR(128) NOT NULL,
        points INTEGER NOT NULL,
        occurred_at BIGINT NOT NULL`,
    names: 'event_key, space_id, address_key, points, occurred_at',
    order: 'event_key',
    indexes: ['CREATE INDEX ix_points_events_space_time ON points_events (space_id, occurred_at)'],
  },
  board_entries: {
    columns: `space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        address_key VARCHAR(128) NOT NULL,
        points BIGINT NOT NULL,
        reached_at BIGINT NOT NULL,
        PRIMARY KEY (space_id, sprint_id, address_key)`,
    names: 'space_id, sprint_id, address_key, points, reached_at',
    order: 'space_id, sprint_id, address_key',
    indexes: [
      `CREATE INDEX ix_board_entries_rank
        ON board_entries (space_id, sprint_id, points DESC, reached_at, address_key)`,
    ],
  },
};

/**
 * SQLite only: points_events and board_entries become WITHOUT ROWID tables, so an insert or upsert
 * writes one B-tree, not two (InnoDB already works this way). The tables are copied in key order;
 * run it in a transaction, or a failure between DROP and RENAME leaves `*_rebuilt` tables.
 */
export class SqliteClusteredLedger1764100000000 extends OneEngineMigration {
  name = 'SqliteClusteredLedger1764100000000';
  protected readonly engine = 'sqlite';
  protected readonly purpose = 'makes the ledger and board entries WITHOUT ROWID tables';

  protected async reshape(queryRunner: QueryRunner): Promise<void> {
    for (const [name, table] of Object.entries(TABLES)) {
      await rebuild(queryRunner, name, table, ' WITHOUT ROWID');
    }
  }

  protected async undo(queryRunner: QueryRunner): Promise<void> {
    for (const [name, table] of Object.entries(TABLES)) {
      await rebuild(queryRunner, name, table, '');
    }
  }
}

async function rebuild(
  queryRunner: QueryRunner,
  name: string,
  table: (typeof TABLES)[keyof typeof TABLES],
  options: string,
): Promise<void> {
  await queryRunner.query(`CREATE TABLE ${name}_rebuilt (${table.columns})${options}`);
  await queryRunner.query(
    `INSERT INTO ${name}_rebuilt (${table.names}) SELECT ${table.names} FROM ${name} ORDER BY ${table.order}`,
  );
  await queryRunner.query(`DROP TABLE ${name}`);
  await queryRunner.query(`ALTER TABLE ${name}_rebuilt RENAME TO ${name}`);
  for (const index of table.indexes) await queryRunner.query(index);
}
