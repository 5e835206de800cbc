import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from './data-source-options';

describe('buildDataSourceOptions (SQLite file)', () => {
  let dir: string;
  let source: DataSource;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'data-source-options-'));
    source = await new DataSource(
      buildDataSourceOptions({ kind: 'sqlite', file: join(dir, 'db.sqlite') }),
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
    expect(await pragma('wal_autocheckpoint')).toBe(16384);
    expect(await pragma('journal_size_limit')).toBe(67108864);
    expect(await pragma('cache_size')).toBe(-65536);
  });
});
