import { createConnection } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOST_MIGRATIONS } from '../../src/host/config/host-data-source';
import { migrationLockName } from '../../src/storage/connection/run-migrations';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

async function appliedMigrations(app: TestApp): Promise<string[]> {
  const rows: Array<{ name: string }> = await app.app
    .get<{ query(sql: string): Promise<Array<{ name: string }>> }>(
      (await import('@nestjs/typeorm')).getDataSourceToken(),
    )
    .query('SELECT name FROM migrations ORDER BY id');
  return rows.map((row) => row.name);
}

describe.each(DB_KINDS)('migrations at start on %s', (kind) => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase(kind);
  });
  afterEach(() => db.drop());

  it('applies them once when instances start together on a fresh database', async () => {
    const apps = await Promise.all([0, 1, 2].map(() => startTestApp(kind, {}, db)));
    try {
      const applied = await appliedMigrations(apps[0]);
      // Each once (TypeORM applies them in timestamp order).
      expect([...applied].sort()).toEqual(
        HOST_MIGRATIONS.map((migration) => migration.name).sort(),
      );
      for (const app of apps) expect((await app.gql('{ space(id: 1) { id } }')).status).toBe(200);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });
});

describe('the migration lock on MariaDB', () => {
  it('makes a starting instance wait while another process migrates', async () => {
    const db = await createTestDatabase('mariadb');
    const holder = await createConnection(db.url.replace(/^mariadb:/, 'mysql:'));
    try {
      const lock = migrationLockName(new URL(db.url).pathname.slice(1));
      const [[held]] = (await holder.query('SELECT GET_LOCK(?, 1) AS locked', [
        lock,
      ])) as unknown as [[{ locked: number }]];
      expect(held.locked).toBe(1);
      let started = false;
      const starting = startTestApp('mariadb', {}, db).then((app) => {
        started = true;
        return app;
      });
      await sleep(1500);
      expect(started).toBe(false);
      const [tables] = (await holder.query("SHOW TABLES LIKE 'migrations'")) as unknown as [
        unknown[],
      ];
      expect(tables).toHaveLength(0);
      await holder.query('SELECT RELEASE_LOCK(?)', [lock]);
      const app = await starting;
      try {
        expect(await appliedMigrations(app)).toHaveLength(HOST_MIGRATIONS.length);
      } finally {
        await app.close();
      }
    } finally {
      await holder.end();
      await db.drop();
    }
  });
});
