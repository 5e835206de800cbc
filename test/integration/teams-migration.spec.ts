import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { HOST_MIGRATIONS, hostDataSourceOptions } from '../../src/host/config/host-data-source';
import { hashPassword } from '../../src/host/dashboard/accounts/password-hasher';
import { Teams1764400000001 } from '../../src/host/dashboard/migrations/1764400000001-teams';
import { DashboardClient } from '../utils/dashboard-client';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';
import { startTestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const EMAIL = 'old-admin@example.com';
const PASSWORD = 'correct horse battery staple';

/** The host's migrations up to (not including) the teams migration: a deployment of before. */
const BEFORE_TEAMS = HOST_MIGRATIONS.slice(
  0,
  HOST_MIGRATIONS.findIndex((migration) => migration === Teams1764400000001),
);

describe.each(DB_KINDS)('the teams migration on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(() => db?.drop());

  it("turns today's admins into operators who keep signing in, and leaves nothing for TypeORM to change", async () => {
    const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
    const before = await new DataSource({ ...options, migrations: BEFORE_TEAMS }).initialize();
    try {
      await before.runMigrations({ transaction: 'each' });
      await runSql(
        before,
        'INSERT INTO admins (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)',
        [randomUUID(), EMAIL, await hashPassword(PASSWORD), Date.now()],
      );
    } finally {
      await before.destroy();
    }

    const after = await new DataSource(options).initialize();
    try {
      const applied = await after.runMigrations({ transaction: 'each' });
      expect(applied.map((m) => m.name)).toContain('Teams1764400000001');
      const [admin] = await after.query('SELECT is_operator, name, disabled_at FROM admins');
      expect({ ...admin, is_operator: Number(admin.is_operator) }).toEqual({
        is_operator: 1,
        name: null,
        disabled_at: null,
      });
      const pending = await after.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await after.destroy();
    }

    // The admin signs in to the migrated database and manages the deployment as before.
    const t = await startTestApp(kind, {}, db);
    try {
      const client = new DashboardClient(t.url.replace('/query', ''));
      expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
      const created = await client.request('/settings/server-api/tokens', {
        method: 'POST',
        json: { name: 'after the migration' },
        headers: { 'x-csrf-token': await client.csrfToken() },
      });
      expect(created.status).toBe(201);
      expect(JSON.parse(created.text)).toMatchObject({ spaceId: null });
      const accounts = await client.request('/settings/accounts');
      expect(JSON.parse(accounts.text)).toEqual([
        expect.objectContaining({ email: EMAIL, operator: true, disabled: false }),
      ]);
    } finally {
      await t.close();
    }
  });
});
