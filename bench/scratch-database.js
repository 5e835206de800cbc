// A fresh database for one benchmark run, dropped afterwards: SQLite gets a file in a temporary
// directory, MariaDB (MARIADB_URL, default mysql://root@127.0.0.1:3306) a scratch database.
/* eslint-disable */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const mysql = require('mysql2/promise');

/** { url, drop(), bufferPoolBytes (MariaDB's innodb_buffer_pool_size) } for `kind`. */
async function scratchDatabase(kind, prefix) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    return {
      url: `sqlite:${join(dir, 'bench.sqlite')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const base = new URL(process.env.MARIADB_URL || 'mysql://root@127.0.0.1:3306');
  const name = `${prefix.replace(/\W/g, '_')}_${process.pid}_${Date.now()}`;
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

module.exports = { scratchDatabase };
