import { DataSource, type DataSourceOptions } from 'typeorm';
import { LoyaltyException } from '../../src/common/errors/loyalty.exception';
import { ReadSnapshots } from '../../src/storage/snapshot/read-snapshot';
import {
  createTestDatabase,
  DB_KINDS,
  hostConnection,
  TestDatabase,
} from '../utils/test-databases';

/** A data source on `db` as a host might configure it; `wal` for SQLite's journal mode. */
async function open(db: TestDatabase, wal = true): Promise<DataSource> {
  // One pooled connection on a server: the spec sees it come back to the pool as it was.
  const options = {
    sqlite: { ...hostConnection(db), enableWAL: wal },
    mariadb: { ...hostConnection(db), extra: { connectionLimit: 1 } },
    postgres: { ...hostConnection(db), poolSize: 1 },
  }[db.kind] as DataSourceOptions;
  const source = await new DataSource(options).initialize();
  await source.query('CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY)');
  await source.query('INSERT INTO notes (id) VALUES (1), (2)');
  return source;
}

const ids = (rows: Array<Record<string, unknown>>) => rows.map((row) => Number(row.id));

describe.each(DB_KINDS)('read snapshots on %s', (kind) => {
  let db: TestDatabase;
  let source: DataSource;

  beforeEach(async () => {
    db = await createTestDatabase(kind);
    source = await open(db);
  });
  afterEach(async () => {
    await source?.destroy();
    await db.drop();
  });

  it('see one moment while writers commit beside them, and let go of the connection', async () => {
    const snapshots = new ReadSnapshots(source);
    const snapshot = await snapshots.open();
    expect(snapshot.takenAt).toBeLessThanOrEqual(Date.now());
    expect(ids(await snapshot.all('SELECT id FROM notes ORDER BY id', []))).toEqual([1, 2]);
    // Another connection writes while the snapshot is open, and is not held up by it.
    const other = await new DataSource(hostConnection(db)).initialize();
    try {
      await other.query('INSERT INTO notes (id) VALUES (3)');
      expect(ids(await other.query('SELECT id FROM notes ORDER BY id'))).toEqual([1, 2, 3]);
    } finally {
      await other.destroy();
    }
    expect(ids(await snapshot.all('SELECT id FROM notes ORDER BY id', []))).toEqual([1, 2]);
    await snapshot.release();
    await snapshot.release(); // twice is harmless
    // The connection is back as it was (on a server the pool's only one): it sees the write, and
    // writes itself.
    await source.query('INSERT INTO notes (id) VALUES (4)');
    expect(ids(await source.query('SELECT id FROM notes ORDER BY id'))).toEqual([1, 2, 3, 4]);
    const next = await snapshots.open();
    expect(ids(await next.all('SELECT id FROM notes ORDER BY id', []))).toEqual([1, 2, 3, 4]);
    await next.release();
  });
});

describe('read snapshots on SQLite outside WAL mode', () => {
  it('are refused with a clear error: a reader would hold every writer up', async () => {
    const db = await createTestDatabase('sqlite');
    const source = await open(db, false);
    try {
      const refusal = await new ReadSnapshots(source).open().catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(LoyaltyException);
      expect(refusal).toMatchObject({
        code: 'OPERATION_NOT_SUPPORTED',
        message: expect.stringContaining('needs the SQLite database in WAL mode'),
      });
      // Nothing was left open: a write goes through at once.
      await source.query('INSERT INTO notes (id) VALUES (3)');
    } finally {
      await source.destroy();
      await db.drop();
    }
  });
});
