#!/usr/bin/env node
// A whole board two ways, on one board written straight into the database: GET /export (one
// consistent snapshot, streamed) and the page walk of /query that SPEC.md describes (50 a page,
// keyset cursors), with the server's memory while it streams. Usage (after npm run build):
//   node bench/export.js [--entries 1000000] [--db sqlite|mariadb|postgres] [--skip-walk]
// On a server the export reads every entry's profile: with a buffer pool (MariaDB) or
// shared_buffers (PostgreSQL) smaller than the tables (128 MB by default on both) those reads go
// to disk or the OS cache; the output gives the size.
// The service runs in a child process, so its resident memory is measured alone (/proc).
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306), PostgreSQL: POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) gets a scratch database (see bench/board-fill.js).
/* eslint-disable */
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { arg, fillBoard } = require('./board-fill');
const { DATABASES } = require('./scratch-database');

const ENTRIES = Number(arg('entries', 1_000_000));
const DB = arg('db', 'sqlite');
const PAGE = 50;
if (!DATABASES.includes(DB)) {
  console.error(`--db: one of ${DATABASES.join(', ')}`);
  process.exit(2);
}

/** The child: the service on a scratch database holding one board of ENTRIES entries. */
async function serve() {
  const { createApp } = require('../dist/src/host/app.factory');
  const { loadConfig } = require('../dist/src/host/config/app-config');
  const { AccessTokensService } = require('../dist/src/auth/access-tokens.service');
  const { getDataSourceToken } = require('@nestjs/typeorm');
  const { scratchDatabase } = require('./scratch-database');
  const db = await scratchDatabase(DB, 'loyalty_export_bench');
  // Limits out of the way (still enforced): one client sends 20,000 pages as fast as it can.
  const env = {
    RATE_LIMIT_TOKEN: '1000000/1s',
    RATE_LIMIT_ADDRESS: '1000000/1s',
    RATE_LIMIT_EXPORT: '1000/1s',
    NODE_ENV: 'production',
  };
  const app = await createApp(loadConfig({ DATABASE_URL: db.url, PORT: '0', ...env }), {
    logger: false,
  });
  const ds = app.get(getDataSourceToken());
  const fillSeconds = (await fillBoard(ds, { entries: ENTRIES, kind: DB, profiles: true })) / 1000;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { token } = await app.get(AccessTokensService).create('bench');
  global.gc?.();
  process.send({
    port: app.getHttpServer().address().port,
    token,
    fillSeconds,
    bufferPoolMB: db.bufferPoolBytes ? db.bufferPoolBytes / 1_048_576 : undefined,
    sharedBuffersMB: db.sharedBuffersBytes ? db.sharedBuffersBytes / 1_048_576 : undefined,
  });
  process.on('message', async (message) => {
    if (message === 'gc') {
      global.gc?.();
      process.send('gc-done');
    }
    if (message === 'stop') {
      await app.close();
      await db.drop();
      process.exit(0);
    }
  });
}

/** Resident memory of a process, from /proc: current and peak, in MB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1]) / 1024;
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

async function main() {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof'] : []),
      '--expose-gc',
      __filename,
      '--serve',
      ...process.argv.slice(2),
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const next = () => new Promise((resolve) => child.once('message', resolve));
  const { port, token, fillSeconds, bufferPoolMB, sharedBuffersMB } = await next();
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'access-token': token };
  const gc = async () => {
    child.send('gc');
    await next();
  };

  /** One export, read as fast as possible; the server's memory sampled every 20 ms meanwhile. */
  async function exportOnce(format) {
    await gc();
    const before = memoryOf(child.pid).rss;
    let maxRss = before;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, memoryOf(child.pid).rss)), 20);
    const started = performance.now();
    const response = await fetch(`${base}/export?spaceId=1&format=${format}`, { headers });
    if (response.status !== 200)
      throw new Error(`export: ${response.status} ${await response.text()}`);
    const firstByteMs = performance.now() - started;
    let bytes = 0;
    let lines = 0;
    for await (const chunk of response.body) {
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const entries = lines - (format === 'csv' ? 1 : 0);
    if (entries !== ENTRIES || Number(response.headers.get('x-board-entries')) !== ENTRIES)
      throw new Error(
        `export: ${entries} entries, header ${response.headers.get('x-board-entries')}`,
      );
    return {
      format,
      seconds: +seconds.toFixed(2),
      entriesPerSecond: Math.round(ENTRIES / seconds),
      megabytes: +(bytes / 1_048_576).toFixed(1),
      firstByteMs: Math.round(firstByteMs),
      serverRssBeforeMB: Math.round(before),
      serverRssGrowthMB: Math.round(maxRss - before),
    };
  }

  /** The walk a script does through /query: every page, one after the other, no pause. */
  async function walk() {
    const query = `query($after: String) { space(id: 1) { loyaltyPointsRanks(cursorAfter: $after) {
      pageInfo { hasNextPage endCursor } list { rank points address { address username } } } } }`;
    const started = performance.now();
    let after = null;
    let pages = 0;
    let entries = 0;
    for (;;) {
      const response = await fetch(`${base}/query`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: { after } }),
      });
      const body = await response.json();
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      const page = body.data.space.loyaltyPointsRanks;
      pages++;
      entries += page.list.length;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    if (entries !== ENTRIES) throw new Error(`walk: ${entries} entries`);
    const seconds = (performance.now() - started) / 1000;
    return {
      pages,
      secondsNoPause: +seconds.toFixed(1),
      entriesPerSecondNoPause: Math.round(ENTRIES / seconds),
      // SPEC.md asks clients for 200-500 ms between pages.
      minutesAtSpecPace: [
        +((seconds + pages * 0.2) / 60).toFixed(0),
        +((seconds + pages * 0.5) / 60).toFixed(0),
      ],
    };
  }

  try {
    const warm = await exportOnce('csv'); // the first read brings the board into the cache
    const exports = [await exportOnce('csv'), await exportOnce('ndjson'), await exportOnce('csv')];
    const walked = process.argv.includes('--skip-walk') ? undefined : await walk();
    console.log(
      JSON.stringify(
        {
          db: DB,
          entries: ENTRIES,
          bufferPoolMB,
          sharedBuffersMB,
          fillSeconds,
          coldExport: warm,
          exports,
          walk: walked,
        },
        null,
        2,
      ),
    );
  } finally {
    child.send('stop');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

(process.argv.includes('--serve') ? serve : main)().catch((error) => {
  console.error(error);
  process.exit(1);
});
