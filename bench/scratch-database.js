// A fresh database for one benchmark run, dropped afterwards: SQLite gets a file in a temporary
// directory, MariaDB (MARIADB_URL, default mysql://root@127.0.0.1:3306) and PostgreSQL
// (POSTGRES_URL, default postgres://postgres@127.0.0.1:5432) a scratch database.
/* eslint-disable */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/** The databases the benches run on, as --db names them. */
const DATABASES = ['sqlite', 'mariadb', 'postgres'];

/**
 * The databases named by a --db value: a comma list of DATABASES, or `all`; `both` (the benches'
 * old default) still means SQLite and MariaDB. Undefined when a name is unknown.
 */
function databasesOf(value) {
  if (value === 'all') return [...DATABASES];
  if (value === 'both') return ['sqlite', 'mariadb'];
  const names = String(value).split(',');
  return names.every((name) => DATABASES.includes(name)) ? names : undefined;
}

/**
 * { url, drop(), bufferPoolBytes (MariaDB's innodb_buffer_pool_size), sharedBuffersBytes
 * (PostgreSQL's shared_buffers) } for `kind`.
 */
async function scratchDatabase(kind, prefix) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    return {
      url: `sqlite:${join(dir, 'bench.sqlite')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `${prefix.replace(/\W/g, '_')}_${process.pid}_${Date.now()}`.toLowerCase();
  if (kind === 'postgres') return postgresDatabase(name);
  if (kind !== 'mariadb') throw new Error(`no scratch database for ${kind}`);
  const mysql = require('mysql2/promise');
  const base = new URL(process.env.MARIADB_URL || 'mysql://root@127.0.0.1:3306');
  const connect = () =>
    mysql.createConnection({
      host: base.hostname,
      port: Number(base.port || 3306),
      user: decodeURIComponent(base.username) || 'root',
      password: decodeURIComponent(base.password),
    });
  const admin = await connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const [[pool]] = await admin.query('SELECT @@innodb_buffer_pool_size AS bytes');
  await admin.end();
  base.pathname = `/${name}`;
  return {
    url: base.toString(),
    bufferPoolBytes: Number(pool.bytes),
    drop: async () => {
      const c = await connect();
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.end();
    },
  };
}

async function postgresDatabase(name) {
  const { Client } = require('pg');
  const base = new URL(process.env.POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432');
  const admin = async () => {
    const client = new Client({
      host: base.hostname,
      port: Number(base.port || 5432),
      user: decodeURIComponent(base.username) || 'postgres',
      password: decodeURIComponent(base.password),
      database: 'postgres',
    });
    await client.connect();
    return client;
  };
  const client = await admin();
  let sharedBuffers;
  try {
    // template0: template1 may carry another locale or objects of its own.
    await client.query(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
    const { rows } = await client.query(
      "SELECT pg_size_bytes(current_setting('shared_buffers')) AS bytes",
    );
    sharedBuffers = Number(rows[0].bytes);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    sharedBuffersBytes: sharedBuffers,
    drop: async () => {
      const c = await admin();
      try {
        // FORCE: a service process that was killed may still hold a connection.
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

module.exports = { DATABASES, databasesOf, scratchDatabase };
