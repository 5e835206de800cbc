import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import type { CommonDataSourceOptions } from '../engine/database-engine';
import type { DatabaseConfig } from '../engine/database-config';

/** The page size of a new SQLite database (see sqliteDataSourceOptions). */
export const SQLITE_PAGE_SIZE = 16_384;
/** SQLite checkpoints its WAL once it holds this much (see sqliteDataSourceOptions). */
const WAL_CHECKPOINT_BYTES = 64 * 1024 * 1024;

/**
 * Reads `sqlite:<path>` (relative to `cwd`), `sqlite:///absolute/path` or `sqlite::memory:`.
 */
export function parseSqliteUrl(url: string, cwd: string): DatabaseConfig {
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (path === '')
    throw new Error('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/loyalty.sqlite');
  if (path === ':memory:') return { kind: 'sqlite', file: ':memory:' };
  // sqlite://./x read as a path is //./x, that is /x: a file far from the one meant.
  if (path.startsWith('//'))
    throw new Error(
      `DATABASE_URL: "${url}" names a host; use sqlite:./relative/path or sqlite:///absolute/path`,
    );
  return { kind: 'sqlite', file: isAbsolute(path) ? path : resolve(cwd, path) };
}

/** TypeORM options for a SQLite file (or `:memory:`), with the settings the module relies on. */
export function sqliteDataSourceOptions(
  config: DatabaseConfig,
  common: CommonDataSourceOptions,
): DataSourceOptions {
  if (config.kind !== 'sqlite') throw new Error(`Not a SQLite database: ${config.kind}`);
  if (config.file !== ':memory:') mkdirSync(dirname(config.file), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: config.file,
    // WAL lets readers go on while the writer writes; NORMAL is durable at each checkpoint.
    prepareDatabase: (db: { pragma(sql: string, options?: { simple: boolean }): unknown }) => {
      // Larger pages for a new database (an existing one keeps its size): an ingest commit
      // rewrites most board pages anyway, and fewer, larger ones cost less (docs/performance.md).
      // Set before journal_mode, which writes the first page.
      db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      // 64 MiB of page cache (the default is 2 MiB): bulk writes touch pages all over the
      // ledger's and the boards' indexes.
      db.pragma('cache_size = -65536');
      // Statement journals (one per upsert inside a transaction) in memory, not a small file
      // write each; other temporary files too (a large sort's cost: docs/operations.md, Memory).
      db.pragma('temp_store = MEMORY');
      // Checkpoint at 64 MiB, not SQLite's 4 MiB: one ingest commit dirties thousands of pages,
      // so the default checkpointed after nearly every commit. The interval is counted in pages;
      // the WAL file is cut back to that size after a checkpoint.
      const pageSize = Number(db.pragma('page_size', { simple: true }));
      db.pragma(`wal_autocheckpoint = ${Math.floor(WAL_CHECKPOINT_BYTES / pageSize)}`);
      db.pragma(`journal_size_limit = ${WAL_CHECKPOINT_BYTES}`);
    },
  };
}
