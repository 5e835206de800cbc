import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { randomBytes } from 'node:crypto';

export type DbKind = 'sqlite' | 'mariadb';

/**
 * Every SQL-touching spec runs on both. MariaDB is required, not optional: a missing server
 * fails the suite with a clear message instead of skipping it. Set MARIADB_URL to point
 * elsewhere (default mysql://root@127.0.0.1:3306).
 */
export const DB_KINDS: DbKind[] = ['sqlite', 'mariadb'];

export interface TestDatabase {
  kind: DbKind;
  url: string;
  drop(): Promise<void>;
}

const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

export async function createTestDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-test-'));
    return {
      kind,
      url: `sqlite:${join(dir, 'test.sqlite')}`,
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `loyalty_test_${randomBytes(6).toString('hex')}`;
  const server = new URL(MARIADB_URL);
  const connect = () =>
    createConnection({
      host: server.hostname,
      port: Number(server.port || 3306),
      user: decodeURIComponent(server.username) || 'root',
      password: decodeURIComponent(server.password),
    });
  let admin;
  try {
    admin = await connect();
  } catch (error) {
    throw new Error(
      `MariaDB is required for the tests but ${server.host} did not answer (${(error as Error).message}). ` +
        'Start it (see .ci/run) or set MARIADB_URL.',
    );
  }
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`);
  await admin.end();
  const url = new URL(MARIADB_URL);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    drop: async () => {
      const conn = await connect();
      await conn.query(`DROP DATABASE IF EXISTS ${name}`);
      await conn.end();
    },
  };
}
