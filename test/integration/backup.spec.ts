import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { IngestService } from '../../src/ingest/ingest.service';
import { parseRecord } from '../../src/records/ingest-record';
import type { IngestRecord } from '../../src/records/ingest-record';
import { runCli } from '../utils/cli';
import { runSql } from '../utils/sql';
import { startTestApp, TestApp } from '../utils/test-app';
import { createTestDatabase, DB_KINDS, DbKind, TestDatabase } from '../utils/test-databases';

const exec = promisify(execFile);

/** A pair of points for two addresses in one batch: every moment of the database has A == B. */
function pair(i: number): IngestRecord[] {
  return [
    { type: 'points', key: `pair-${i}-a`, spaceId: 1, address: '0xA', points: 1 },
    { type: 'points', key: `pair-${i}-b`, spaceId: 1, address: '0xB', points: 1 },
  ].map((raw) => {
    const parsed = parseRecord({ ...raw, occurredAt: '2026-01-01T00:00:00Z' });
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.record;
  });
}

/** Runs `script` with the database's host, port, user and name as $1-$4, and `file` as $5. */
async function mariadbShell(db: TestDatabase, script: string, file: string): Promise<void> {
  const url = new URL(db.url);
  await exec('sh', [
    '-c',
    script,
    'sh',
    url.hostname,
    url.port || '3306',
    decodeURIComponent(url.username),
    url.pathname.slice(1),
    file,
  ]);
}

/**
 * Takes a backup of `db` with the command docs/operations.md gives for its database, into a new
 * file of `folder`, and restores it into `target` (a fresh database of the same kind; a SQLite
 * restore is the file itself).
 */
const BACKUPS: Record<
  DbKind,
  {
    backup(db: TestDatabase, folder: string): Promise<string>;
    restore(file: string, target: TestDatabase): Promise<TestDatabase>;
  }
> = {
  sqlite: {
    backup: async (db, folder) => {
      const file = join(folder, 'loyalty-backup.sqlite');
      const result = await runCli(['backup', '--out', file], { DATABASE_URL: db.url });
      if (result.code !== 0)
        throw new Error(`loyalty backup exited ${result.code}: ${result.stderr}`);
      return file;
    },
    restore: (file, target) => Promise.resolve({ ...target, url: `sqlite:${file}` }),
  },
  mariadb: {
    backup: async (db, folder) => {
      const file = join(folder, 'loyalty.sql');
      await mariadbShell(
        db,
        'mariadb-dump --single-transaction --hex-blob --routines --triggers ' +
          '-h "$1" -P "$2" -u "$3" "$4" > "$5"',
        file,
      );
      return file;
    },
    restore: async (file, target) => {
      await mariadbShell(target, 'mariadb -h "$1" -P "$2" -u "$3" "$4" < "$5"', file);
      return target;
    },
  },
  postgres: {
    backup: async (db, folder) => {
      const file = join(folder, 'loyalty.dump');
      await exec('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${db.url}`]);
      return file;
    },
    restore: async (file, target) => {
      await exec('pg_restore', ['--no-owner', `--dbname=${target.url}`, file]);
      return target;
    },
  },
};

/**
 * The ledger's points per address, its rows and total, in one database. (The boards are checked
 * through the service: on SQLite they may be folded from a backlog after a start.)
 */
async function invariants(dataSource: DataSource) {
  const byAddress = await runSql<{ address_key: string; points: number }>(
    dataSource,
    'SELECT address_key, SUM(points) AS points FROM points_events WHERE space_id = 1 GROUP BY address_key ORDER BY address_key',
  );
  const [ledger] = await runSql<{ events: number; total: number }>(
    dataSource,
    'SELECT COUNT(*) AS events, SUM(points) AS total FROM points_events WHERE space_id = 1',
  );
  return {
    byAddress: byAddress.map((row) => [row.address_key, Number(row.points)]),
    events: Number(ledger.events),
    total: Number(ledger.total ?? 0),
  };
}

describe.each(DB_KINDS)('a backup on %s', (kind) => {
  let app: TestApp;
  let restored: TestApp | undefined;
  let target: TestDatabase;
  let folder: string;
  beforeAll(async () => {
    app = await startTestApp(kind);
    target = await createTestDatabase(kind);
    folder = mkdtempSync(join(tmpdir(), 'loyalty-backup-'));
    await app.load([{ type: 'space', id: 1, name: 'Backed up' }]);
  });
  afterAll(async () => {
    await restored?.close();
    await app.close();
    await app.db.drop();
    await target.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('taken under writes, restores one consistent moment the service then serves', async () => {
    const ingest = app.app.get(IngestService);
    const source = app.app.get<DataSource>(getDataSourceToken());
    // Batches committed (counted once each commits).
    let written = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        await ingest.applyRecords(pair(written));
        written++;
      }
    })();
    try {
      while (written < 50) await new Promise((resolve) => setTimeout(resolve, 5));
      const before = written;
      const file = await BACKUPS[kind].backup(app.db, folder);
      // The writer went on while the backup ran: it was taken under writes.
      expect(written).toBeGreaterThan(before);
      stop = true;
      await writer;
      expect(existsSync(file)).toBe(true);

      const copy = await BACKUPS[kind].restore(file, target);
      restored = await startTestApp(kind, {}, copy);
      const seen = await invariants(restored.app.get<DataSource>(getDataSourceToken()));
      // One moment: both addresses of every pair or neither; the board (below) equal to the ledger.
      const pairs = seen.events / 2;
      expect(seen.events % 2).toBe(0);
      expect(pairs).toBeGreaterThanOrEqual(50);
      expect(seen).toEqual({
        byAddress: [
          ['0xa', pairs],
          ['0xb', pairs],
        ],
        events: pairs * 2,
        total: pairs * 2,
      });
      // The live database went on past the backup's moment.
      expect((await invariants(source)).events).toBeGreaterThanOrEqual(seen.events);
      const page = await restored.gql(
        '{ space(id: 1) { loyaltyPointsRanks { totalCount list { rank points address { address } } } } }',
      );
      expect(page.body.data.space.loyaltyPointsRanks).toEqual({
        totalCount: 2,
        list: [
          { rank: 1, points: pairs, address: { address: '0xA' } },
          { rank: 2, points: pairs, address: { address: '0xB' } },
        ],
      });
    } finally {
      stop = true;
      await writer;
    }
  });
});

describe('loyalty backup', () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'loyalty-backup-cli-'));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('refuses a missing database, an existing file and a database server, with exit 2', async () => {
    const missing = await runCli(['backup', '--out', join(folder, 'a.sqlite')], {
      DATABASE_URL: `sqlite:${join(folder, 'nothing-here.sqlite')}`,
    });
    expect(missing).toMatchObject({
      code: 2,
      stderr: `backup: there is no database at ${join(folder, 'nothing-here.sqlite')} (see --database-url)\n`,
    });
    expect(existsSync(join(folder, 'nothing-here.sqlite'))).toBe(false);

    const db = await createTestDatabase('sqlite');
    try {
      const made = await runCli(['migrate'], { DATABASE_URL: db.url });
      expect(made.code).toBe(0);
      const out = join(folder, 'twice.sqlite');
      expect((await runCli(['backup', '--out', out], { DATABASE_URL: db.url })).code).toBe(0);
      const again = await runCli(['backup', '--out', out], { DATABASE_URL: db.url });
      expect(again).toMatchObject({
        code: 2,
        stderr: `backup: ${out} already exists: give a new file\n`,
      });
    } finally {
      await db.drop();
    }

    const server = await runCli(['backup', '--out', join(folder, 'b.sql')], {
      DATABASE_URL: 'mysql://root@127.0.0.1:3306/test',
    });
    expect(server).toMatchObject({
      code: 2,
      stderr:
        "backup copies embedded databases only: back a database server up with its own dump tool, as docs/operations.md's Backup section shows\n",
    });
  });
});
