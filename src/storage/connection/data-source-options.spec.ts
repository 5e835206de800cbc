import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SQLITE_PAGE_SIZE } from '../sqlite/sqlite-connection';
import { dataSourceOptions } from './data-source-options';

/** The connection settings alone: no entity or migration is needed to read them back. */
const NO_TABLES = { entities: [], migrations: [] };

describe('dataSourceOptions (SQLite file)', () => {
  let dir: string;
  let source: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'data-source-options-'));
    source = await new DataSource(
      await dataSourceOptions({ kind: 'sqlite', file: join(dir, 'db.sqlite') }, NO_TABLES),
    ).initialize();
  });

  afterAll(async () => {
    await source?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const pragma = async (name: string): Promise<unknown> => {
    const [row]: Array<Record<string, unknown>> = await source.query(`PRAGMA ${name}`);
    return Object.values(row)[0];
  };

  it('opens the file in WAL mode, durable at each checkpoint, waiting for a busy writer', async () => {
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(1); // NORMAL
    expect(await pragma('busy_timeout')).toBe(5000);
  });

  it('keeps statement journals in memory and checkpoints at 64 MiB of WAL', async () => {
    // Measured on a 1,000,000-record import: journals on disk were a million small writes, and
    // the default checkpoint ran after nearly every 1,000-record commit.
    expect(await pragma('temp_store')).toBe(2); // MEMORY
    // Counted in pages: 4,096 pages of 16 KiB.
    expect(await pragma('wal_autocheckpoint')).toBe(4096);
    expect(await pragma('journal_size_limit')).toBe(67108864);
    expect(await pragma('cache_size')).toBe(-65536);
  });

  it('creates a new database with 16 KiB pages', async () => {
    expect(SQLITE_PAGE_SIZE).toBe(16384);
    expect(await pragma('page_size')).toBe(16384);
  });
});

describe('dataSourceOptions (an existing SQLite file)', () => {
  it('opens a database of 4 KiB pages as it is, its rows and page size kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'data-source-options-old-'));
    const file = join(dir, 'old.sqlite');
    try {
      const old = await new DataSource({
        type: 'better-sqlite3',
        database: file,
        prepareDatabase: (db: { pragma(sql: string): unknown }) => {
          db.pragma('page_size = 4096');
          db.pragma('journal_mode = WAL');
        },
      }).initialize();
      await old.query('CREATE TABLE kept (n INTEGER)');
      await old.query('INSERT INTO kept (n) VALUES (1), (2), (3)');
      await old.destroy();

      const reopened = await new DataSource(
        await dataSourceOptions({ kind: 'sqlite', file }, NO_TABLES),
      ).initialize();
      try {
        const [size]: Array<{ page_size: number }> = await reopened.query('PRAGMA page_size');
        expect(size.page_size).toBe(4096);
        // Still a checkpoint per 64 MiB of WAL: 16,384 pages of 4 KiB.
        const [interval]: Array<{ wal_autocheckpoint: number }> = await reopened.query(
          'PRAGMA wal_autocheckpoint',
        );
        expect(interval.wal_autocheckpoint).toBe(16384);
        await reopened.query('INSERT INTO kept (n) VALUES (4)');
        const rows: Array<{ n: number }> = await reopened.query('SELECT n FROM kept ORDER BY n');
        expect(rows.map((row) => row.n)).toEqual([1, 2, 3, 4]);
        const [check]: Array<{ integrity_check: string }> =
          await reopened.query('PRAGMA integrity_check');
        expect(check.integrity_check).toBe('ok');
      } finally {
        await reopened.destroy();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
