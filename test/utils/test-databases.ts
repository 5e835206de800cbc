import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { randomBytes } from 'node:crypto';

export type DbKind = 'sqlite' | 'mariadb' | 'postgres';

const ALL_KINDS: DbKind[] = ['sqlite', 'mariadb', 'postgres'];

/**
 * Every SQL-touching spec runs on all three. The servers are required, not optional: a missing
 * server fails the suite with a clear message instead of skipping it. Set MARIADB_URL or
 * POSTGRES_URL to point elsewhere (defaults mysql://root@127.0.0.1:3306 and
 * postgres://postgres@127.0.0.1:5432). TEST_DATABASES=sqlite (a comma-separated list) narrows a
 * run on purpose: the Node matrix, which repeats the suite for the native SQLite driver only
 * (scripts/test-node-matrix.js).
 */
export const DB_KINDS: DbKind[] = selectedKinds(process.env.TEST_DATABASES);

/** The server kinds among DB_KINDS: specs of replication, locks and recovery. */
export const SERVER_KINDS = DB_KINDS.filter(
  (kind): kind is 'mariadb' | 'postgres' => kind !== 'sqlite',
);

function selectedKinds(list: string | undefined): DbKind[] {
  if (!list) return ALL_KINDS;
  const kinds = list.split(',').map((kind) => kind.trim());
  const unknown = kinds.filter((kind) => !(ALL_KINDS as string[]).includes(kind));
  if (unknown.length > 0 || kinds.length === 0)
    throw new Error(`TEST_DATABASES: ${unknown.join(', ')} unknown; use ${ALL_KINDS.join(', ')}`);
  return kinds as DbKind[];
}

export interface TestDatabase {
  kind: DbKind;
  url: string;
  drop(): Promise<void>;
}

export const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
export const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';

export async function createTestDatabase(kind: DbKind): Promise<TestDatabase> {
  switch (kind) {
    case 'sqlite':
      return sqliteDatabase();
    case 'mariadb':
      return mariadbDatabase();
    case 'postgres':
      return postgresDatabase();
  }
}

function sqliteDatabase(): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'loyalty-test-'));
  return {
    kind: 'sqlite',
    url: `sqlite:${join(dir, 'test.sqlite')}`,
    drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  };
}

async function mariadbDatabase(): Promise<TestDatabase> {
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
    kind: 'mariadb',
    url: url.toString(),
    drop: async () => {
      const conn = await connect();
      await conn.query(`DROP DATABASE IF EXISTS ${name}`);
      await conn.end();
    },
  };
}

/** A client of the PostgreSQL server's maintenance database, for creating and dropping others. */
export async function postgresAdmin(serverUrl = POSTGRES_URL): Promise<Client> {
  const server = new URL(serverUrl);
  const client = new Client({
    host: server.hostname,
    port: Number(server.port || 5432),
    user: decodeURIComponent(server.username) || 'postgres',
    password: decodeURIComponent(server.password),
    database: 'postgres',
    connectionTimeoutMillis: 5000,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is required for the tests but ${server.host} did not answer (${(error as Error).message}). ` +
        'Start it (see .ci/run) or set POSTGRES_URL.',
    );
  }
  return client;
}

async function postgresDatabase(): Promise<TestDatabase> {
  const name = `loyalty_test_${randomBytes(6).toString('hex')}`;
  const admin = await postgresAdmin();
  try {
    await admin.query(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    url: url.toString(),
    drop: async () => {
      const client = await postgresAdmin();
      try {
        // FORCE: a spec that failed may have left a connection open.
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * TypeORM's connection options for a test database, as a host writes them (the README's module
 * snippet): the driver of each kind, and the URL.
 */
export function hostConnection(
  db: Pick<TestDatabase, 'kind' | 'url'>,
):
  | { type: 'better-sqlite3'; database: string; enableWAL: true }
  | { type: 'mysql' | 'postgres'; url: string } {
  switch (db.kind) {
    case 'sqlite':
      return { type: 'better-sqlite3', database: db.url.slice('sqlite:'.length), enableWAL: true };
    case 'mariadb':
      return { type: 'mysql', url: db.url };
    case 'postgres':
      return { type: 'postgres', url: db.url };
  }
}
