import { createConnection } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOST_MIGRATIONS } from '../../src/host/config/host-data-source';
import { migrationLockName } from '../../src/storage/mysql/mysql-migration-lock';
import { postgresMigrationLockKey } from '../../src/storage/postgres/postgres-migration-lock';
import { Client } from 'pg';
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

describe('the migration lock on PostgreSQL', () => {
  it('makes a starting instance wait while another process migrates', async () => {
    const db = await createTestDatabase('postgres');
    const holder = new Client({ connectionString: db.url });
    await holder.connect();
    try {
      const key = postgresMigrationLockKey(new URL(db.url).pathname.slice(1));
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [key]);
      let started = false;
      const starting = startTestApp('postgres', {}, db).then((app) => {
        started = true;
        return app;
      });
      await sleep(1500);
      expect(started).toBe(false);
      // The waiting instance holds no other lock and has created nothing yet.
      const { rows } = await holder.query(
        `SELECT COUNT(*) AS n FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_name = 'spaces'`,
      );
      expect(Number(rows[0].n)).toBe(0);
      const waiting = await holder.query(
        `SELECT COUNT(*) AS n FROM pg_locks
          WHERE locktype = 'advisory' AND NOT granted AND database =
            (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      expect(Number(waiting.rows[0].n)).toBe(1);
      await holder.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
      const app = await starting;
      try {
        expect(await appliedMigrations(app)).toHaveLength(HOST_MIGRATIONS.length);
        // The lock is given back once the migrations are done.
        const held = await holder.query(
          "SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
        );
        expect(Number(held.rows[0].n)).toBe(0);
      } finally {
        await app.close();
      }
    } finally {
      await holder.end();
      await db.drop();
    }
  });
});
