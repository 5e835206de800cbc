#!/usr/bin/env node
// Ingestion throughput, as an operator sees it: `import FILE` (the CLI, a separate process) and
// POST /ingest in batches (a real server process, loopback HTTP), each into a fresh database, and
// both as a share of the raw driver baseline measured in the same run: bench/ingest-raw.js, a
// plain script with the driver alone (better-sqlite3, mysql2, pg) writing the same rows for the
// same file, in batches of the import's size (IMPORT_BATCH), one transaction each; the driver's
// ceiling for this schema. It skips the rank buckets (board_rank_buckets) and every read (see its
// header), so the service's share is below 100% by what those cost too.
// Usage (after npm run build):
//   node bench/ingest.js [--records 1000000] [--addresses 100000] [--distribution uniform|zipf|cycle]
//                        [--db sqlite,mariadb,postgres|all|both] [--batch 1000] [--concurrency 4]
//                        [--skip-http] [--skip-raw]
// --db: a comma list of databases, all (the default) or both (SQLite and MariaDB). MariaDB:
// MARIADB_URL (default mysql://root@127.0.0.1:3306), PostgreSQL: POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) get a scratch database per measurement; each made by the
// service's migrations (the CLI's migrate).
// After each run (outside its time) the all-time board is exported and checked against the sums
// of the records, and the rows of the ledger's tables are counted (import and raw driver side by
// side). On SQLite, POST /ingest also reports how long the idle server took after the last answer
// to fold the change log into the boards' rows (see BoardBacklog), and its CPU.
// Results are printed and written to bench/results/ingest-<time>.json (git-ignored).
/* eslint-disable */
const { spawn } = require('node:child_process');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } = require('node:fs');
const { cpus, totalmem, tmpdir } = require('node:os');
const { join } = require('node:path');
const net = require('node:net');
const { lines, options: fileOptions } = require('./ingest-file');
const { databasesOf, scratchDatabase } = require('./scratch-database');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const RECORDS = Number(arg('records', 1_000_000));
const ADDRESSES = Number(arg('addresses', 100_000));
const DISTRIBUTION = arg('distribution', 'uniform');
const DBS = databasesOf(arg('db', 'all'));
const BATCH = Number(arg('batch', 1000));
const CONCURRENCY = Number(arg('concurrency', 4));
const SKIP_HTTP = process.argv.includes('--skip-http');
const SKIP_RAW = process.argv.includes('--skip-raw');
const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'host', 'cli', 'main.js');
const MAIN = join(ROOT, 'dist', 'src', 'host', 'main.js');
const RAW = join(__dirname, 'ingest-raw.js');
/** Records per transaction of `import` (the CLI's default, passed explicitly) and of the baseline. */
const IMPORT_BATCH = 200_000;
if (!DBS) {
  console.error('--db: a comma list of sqlite, mariadb, postgres; or all, or both');
  process.exit(2);
}

function run(args, env, { capture = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ stdout, stderr })
        : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

async function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Each address's all-time total, summed from the records: what the board must show. */
function expectedTotals(records) {
  const totals = new Map();
  for (const line of records) {
    const record = JSON.parse(line);
    if (record.type !== 'points') continue;
    const key = record.address.toLowerCase();
    totals.set(key, (totals.get(key) ?? 0) + record.points);
  }
  return totals;
}

/**
 * After a measured run (outside its time): the all-time board, exported as CSV, holds exactly the
 * addresses whose summed points are above 0, with those sums, in rank order.
 */
async function verifyBoard(url, expected, path) {
  const { stdout } = await run([CLI, 'export', '--space', '1'], { DATABASE_URL: url });
  const rows = stdout.trimEnd().split('\n').slice(1);
  const onBoard = [...expected.values()].filter((points) => points > 0).length;
  let previous = Infinity;
  const seen = new Set();
  rows.forEach((row, i) => {
    const [rank, shown, , points] = row.split(',');
    const address = shown.toLowerCase();
    if (
      seen.has(address) ||
      Number(rank) !== i + 1 ||
      Number(points) > previous ||
      expected.get(address) !== Number(points)
    )
      throw new Error(
        `${path}: board row ${i + 1} is ${row}, expected ${expected.get(address)} points`,
      );
    previous = Number(points);
    seen.add(address);
  });
  if (rows.length !== onBoard)
    throw new Error(`${path}: ${rows.length} addresses on the board, expected ${onBoard}`);
}

/**
 * CPU seconds (user and system) a process has used so far, from /proc (Linux; undefined
 * elsewhere). On a machine whose speed swings, the server's CPU time per record varies less than
 * its throughput.
 */
function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (name) ": state is the 1st field, utime and stime the 12th and 13th, in ticks
    // of USER_HZ (100 on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * SQLite: waits until the server has folded every board's changes into board_entries (no board
 * has unfolded_since), and answers how long that took after the last answer and the server's CPU
 * seconds by then.
 */
async function awaitFolds(url, pid) {
  const Database = require('better-sqlite3');
  const db = new Database(url.slice('sqlite:'.length), { readonly: true });
  const started = process.hrtime.bigint();
  try {
    const unfolded = db.prepare(
      'SELECT COUNT(*) AS n FROM boards WHERE unfolded_since IS NOT NULL',
    );
    for (;;) {
      if (unfolded.get().n === 0)
        return {
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
          cpuSeconds: cpuSecondsOf(pid),
        };
      if (process.hrtime.bigint() - started > 120e9) throw new Error('boards not folded in 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    db.close();
  }
}

/**
 * The row of one SELECT, read with the database's driver (numbers as numbers: PostgreSQL and
 * mysql2 give COUNT and SUM as text or BIGINT).
 */
async function selectRow(kind, url, sql) {
  let row;
  if (kind === 'sqlite') {
    const Database = require('better-sqlite3');
    const db = new Database(url.slice('sqlite:'.length), { readonly: true });
    try {
      row = db.prepare(sql).get();
    } finally {
      db.close();
    }
  } else if (kind === 'postgres') {
    const { Client } = require('pg');
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      [row] = (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  } else {
    const mysql = require('mysql2/promise');
    const conn = await mysql.createConnection(url);
    try {
      [[row]] = await conn.query(sql);
    } finally {
      await conn.end();
    }
  }
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]));
}

/**
 * After a run (outside its time): the rows of the tables points records write. Output names in
 * lower case, which PostgreSQL keeps unquoted. A running server prunes board_changes after 10 min.
 */
function tableRows(kind, url) {
  return selectRow(
    kind,
    url,
    `SELECT (SELECT COUNT(*) FROM points_events) AS events,
       (SELECT COUNT(*) FROM board_entries) AS entries,
       (SELECT COUNT(*) FROM board_changes WHERE address_key IS NOT NULL) AS changes,
       (SELECT COUNT(*) FROM board_changes WHERE address_key IS NULL) AS resets,
       (SELECT COUNT(*) FROM profiles) AS profiles,
       (SELECT SUM(entry_count) FROM boards) AS counted`,
  );
}

const rowsText = (rows) =>
  `points_events ${fmt(rows.events)}, board_entries ${fmt(rows.entries)}, board_changes ` +
  `${fmt(rows.changes)} + ${fmt(rows.resets)} resets, profiles ${fmt(rows.profiles)}, ` +
  `boards.entry_count ${fmt(rows.counted)}`;

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const DRIVERS = { sqlite: 'better-sqlite3', mariadb: 'mysql2', postgres: 'pg' };

async function benchImport(kind, file, expected) {
  const db = await scratchDatabase(kind, 'bench_ingest');
  try {
    await run([CLI, 'migrate'], { DATABASE_URL: db.url });
    const started = process.hrtime.bigint();
    const { stderr } = await run([CLI, 'import', file, '--batch-size', String(IMPORT_BATCH)], {
      DATABASE_URL: db.url,
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (!stderr.includes(`${RECORDS + 3} accepted`))
      throw new Error(`import did not accept everything: ${stderr.slice(-500)}`);
    await verifyBoard(db.url, expected, `${kind} import`);
    return { seconds, perSecond: RECORDS / seconds, rows: await tableRows(kind, db.url) };
  } finally {
    await db.drop();
  }
}

/**
 * The raw driver baseline (bench/ingest-raw.js) on the same file, timed as the import is: from
 * the process's start to its end.
 */
async function benchRaw(kind, file, expected) {
  const db = await scratchDatabase(kind, 'bench_ingest');
  try {
    await run([CLI, 'migrate'], { DATABASE_URL: db.url });
    const started = process.hrtime.bigint();
    const { stdout } = await run([RAW, file, '--batch-size', String(IMPORT_BATCH)], {
      DATABASE_URL: db.url,
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const wrote = JSON.parse(stdout.trim().split('\n').pop());
    if (wrote.events !== RECORDS) throw new Error(`raw driver wrote ${wrote.events} events`);
    await verifyBoard(db.url, expected, `${kind} raw driver`);
    return { seconds, perSecond: RECORDS / seconds, wrote, rows: await tableRows(kind, db.url) };
  } finally {
    await db.drop();
  }
}

async function benchHttp(kind, records, expected) {
  const db = await scratchDatabase(kind, 'bench_ingest');
  const port = await freePort();
  const env = {
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_INGEST: 'off',
    NODE_ENV: 'production',
  };
  let server;
  try {
    await run([CLI, 'migrate'], env);
    const { stdout } = await run(
      [CLI, 'token', 'create', '--name', 'bench', '--scope', 'ingest'],
      env,
    );
    const token = stdout.trim();
    server = spawn(process.execPath, [MAIN], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const url = `http://127.0.0.1:${port}/ingest`;
    for (let i = 0; ; i++) {
      try {
        await fetch(`http://127.0.0.1:${port}/health/live`);
        break;
      } catch {
        if (i > 200) throw new Error('server did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const post = async (body) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', 'access-token': token },
        body,
      });
      const answer = await response.json();
      if (response.status !== 200 || answer.refused > 0)
        throw new Error(
          `ingest answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`,
        );
      return answer.accepted;
    };
    await post(records.slice(0, 3).join('\n'));
    const batches = [];
    for (let i = 3; i < records.length; i += BATCH)
      batches.push(records.slice(i, i + BATCH).join('\n'));
    const latencies = [];
    let next = 0;
    let accepted = 0;
    const cpuBefore = cpuSecondsOf(server.pid);
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < batches.length) {
          const body = batches[next++];
          const t0 = process.hrtime.bigint();
          const applied = await post(body);
          accepted += applied;
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpuAfter = cpuSecondsOf(server.pid);
    if (accepted !== RECORDS) throw new Error(`accepted ${accepted} of ${RECORDS}`);
    latencies.sort((a, b) => a - b);
    // SQLite leaves board changes in the change log and folds them into the boards' rows later
    // (BoardBacklog): the rest of that work, done by the idle server after the last answer.
    const folded = kind === 'sqlite' ? await awaitFolds(db.url, server.pid) : undefined;
    await verifyBoard(db.url, expected, `${kind} POST /ingest`);
    const rows = await tableRows(kind, db.url);
    return {
      rows,
      seconds,
      perSecond: RECORDS / seconds,
      p50ms: latencies[Math.floor(latencies.length / 2)],
      p99ms: latencies[Math.floor(latencies.length * 0.99)],
      serverCpuSeconds:
        cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
      ...(folded && {
        foldSeconds: folded.seconds,
        foldCpuSeconds:
          folded.cpuSeconds === undefined || cpuAfter === undefined
            ? undefined
            : folded.cpuSeconds - cpuAfter,
      }),
    };
  } finally {
    server?.kill('SIGTERM');
    await new Promise((r) => (server ? server.once('exit', r) : r()));
    await db.drop();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-file-'));
  const file = join(dir, 'points.ndjson');
  const opts = {
    ...fileOptions([]),
    records: RECORDS,
    addresses: ADDRESSES,
    distribution: DISTRIBUTION,
  };
  const records = [...lines(opts)];
  writeFileSync(file, records.join('\n') + '\n');
  const expected = expectedTotals(records);
  const machine = `${cpus().length} x ${cpus()[0].model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  console.log(
    `${RECORDS.toLocaleString('en-US')} points records over ${ADDRESSES.toLocaleString('en-US')} addresses (${DISTRIBUTION}); ${machine}`,
  );
  const results = [];
  for (const kind of DBS) {
    // First, so that the service's lines can give their share of it.
    const raw = SKIP_RAW ? undefined : await benchRaw(kind, file, expected);
    const share = (perSecond) =>
      raw ? `  = ${((100 * perSecond) / raw.perSecond).toFixed(0)}% of the raw driver` : '';
    if (raw) {
      results.push({ db: kind, path: 'raw driver', batchSize: IMPORT_BATCH, ...raw });
      console.log(
        `${kind.padEnd(8)} raw driver           ${fmt(raw.perSecond).padStart(8)} records/s  (${raw.seconds.toFixed(1)} s; ${DRIVERS[kind]} alone, ${fmt(IMPORT_BATCH)} records a transaction, no rank buckets, no reads)`,
      );
    }
    const imported = await benchImport(kind, file, expected);
    results.push({ db: kind, path: 'import FILE', batchSize: IMPORT_BATCH, ...imported });
    console.log(
      `${kind.padEnd(8)} import FILE          ${fmt(imported.perSecond).padStart(8)} records/s  (${imported.seconds.toFixed(1)} s)${share(imported.perSecond)}`,
    );
    if (raw) {
      console.log(`         rows, raw driver: ${rowsText(raw.rows)}`);
      console.log(`         rows, import:     ${rowsText(imported.rows)}`);
    }
    if (!SKIP_HTTP) {
      const http = await benchHttp(kind, records, expected);
      results.push({ db: kind, path: `POST /ingest x${BATCH}`, ...http });
      console.log(
        `${kind.padEnd(8)} POST /ingest x${BATCH}   ${fmt(http.perSecond).padStart(8)} records/s  (${http.seconds.toFixed(1)} s, ${CONCURRENCY} clients, batch p50 ${http.p50ms.toFixed(0)} ms, p99 ${http.p99ms.toFixed(0)} ms${http.serverCpuSeconds === undefined ? '' : `, server CPU ${http.serverCpuSeconds.toFixed(1)} s`}${http.foldSeconds === undefined ? '' : `; boards folded ${http.foldSeconds.toFixed(1)} s after the last answer${http.foldCpuSeconds === undefined ? '' : `, ${http.foldCpuSeconds.toFixed(1)} s more server CPU`}`})${share(http.perSecond)}`,
      );
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const out = join(__dirname, 'results');
  mkdirSync(out, { recursive: true });
  const target = join(out, `ingest-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    target,
    JSON.stringify(
      {
        records: RECORDS,
        addresses: ADDRESSES,
        distribution: DISTRIBUTION,
        machine,
        batch: BATCH,
        concurrency: CONCURRENCY,
        importBatch: IMPORT_BATCH,
        results,
      },
      null,
      2,
    ),
  );
  console.log(`written to ${target}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
