import { DataSource } from 'typeorm';
import { parseDatabaseUrl } from '../../src/storage/database-url';
import { resolveDataSourceOptions } from '../../src/storage/data-source-options';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';

describe.each(DB_KINDS)('migrations on %s', (kind) => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dataSource = await new DataSource(
      await resolveDataSourceOptions(parseDatabaseUrl(db.url)),
    ).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('build the schema the entities describe, with nothing left for TypeORM to change', async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    expect(applied.map((m) => m.name)).toEqual([
      'InitialSchema1763700000000',
      'Dashboard1763800000000',
    ]);
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('create the descending rank index the keyset queries rely on', async () => {
    const sql =
      kind === 'sqlite'
        ? "SELECT sql AS definition FROM sqlite_master WHERE name = 'ix_board_entries_rank'"
        : "SELECT GROUP_CONCAT(CONCAT(column_name, ' ', collation) ORDER BY seq_in_index) AS definition FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = 'ix_board_entries_rank'";
    const [row] = await dataSource.query(sql);
    expect(String(row.definition)).toMatch(
      kind === 'sqlite'
        ? /points DESC, reached_at, address_key/
        : /points D,reached_at A,address_key A/,
    );
  });

  it('revert cleanly and apply again', async () => {
    await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.undoLastMigration({ transaction: 'each' });
    const tables = await dataSource.query(
      kind === 'sqlite'
        ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('spaces', 'board_entries', 'admins', 'admin_sessions')"
        : "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('spaces', 'board_entries', 'admins', 'admin_sessions')",
    );
    expect(tables).toEqual([]);
    expect(await dataSource.runMigrations()).toHaveLength(2);
  });
});
