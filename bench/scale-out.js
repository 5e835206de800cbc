#!/usr/bin/env node
// Pages per second through haproxy for one, two and three instances, and page latency while
// POST /ingest runs at full speed, on the scale-out topology of scripts/scale-out.js (MariaDB
// primary + replica, Redis, haproxy) and on SQLite (one instance: SQLite is one machine's
// database). A bare node:http server, directly and behind the same haproxy, is measured in the
// same run as the machine's ceiling. Usage (after npm run build; needs mariadbd and haproxy):
//   node bench/scale-out.js [--db mariadb,sqlite] [--entries 50000] [--duration 5]
//                           [--connections 16] [--ingest-clients 4] [--batch 500]
// Results: a markdown table on stdout and bench/results/scale-out-<time>.json (git-ignored).
//
// Processes: each instance, haproxy, each MariaDB server, the page load generator
// (bench/pages/load.js: node:http keep-alive, a closed loop) and the ingest load generator (this
// file with --ingest-child) run apart, so the figures include what a real deployment pays
// (haproxy's hop, Redis for every rate-limit check, the change feed on every instance). Pages are
// the first page of a board of --entries entries, 50 entries, each body distinct (an unused
// variable) so the response cache never answers. Rate limits are raised (still enforced, in Redis).
// On a machine with fewer cores than processes the instances share cores: see the report's note.
/* eslint-disable */
'use strict';
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { percentile } = require('./pages/http');
const { forkChild } = require('./pages/child');
const { arg } = require('./board-fill');

const INGEST_CHILD = process.argv.includes('--ingest-child');

// ---------- the ingest load generator (a child process) ----------

/**
 * Posts batches of points records through `url` from `clients` concurrent keep-alive clients until
 * told to stop; answers the records acknowledged, the requests refused or failed, and the time.
 */
function ingestChild() {
  let stop = false;
  process.on('disconnect', () => process.exit(1));
  process.on('message', async (message) => {
    if (message.cmd === 'stop') {
      stop = true;
      return;
    }
    const { url, token, clients, batch, addresses } = message;
    let accepted = 0;
    let failures = 0;
    let next = 0;
    const latencies = [];
    const started = performance.now();
    async function client(c) {
      while (!stop) {
        const n = next++;
        const records = Array.from({ length: batch }, (_, i) => ({
          type: 'points',
          key: `bench-${process.pid}-${n}-${i}`,
          spaceId: 1,
          address: `0x${(((n * batch + i) * 7919) % addresses).toString(16).padStart(40, '0')}`,
          points: 1 + ((n + i) % 10),
          occurredAt: new Date(Date.UTC(2026, 2, 1) + n * 1000).toISOString(),
        }));
        const t0 = performance.now();
        try {
          const response = await fetch(`${url}/ingest`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'access-token': token },
            body: JSON.stringify(records),
          });
          const body = await response.json();
          if (response.ok) accepted += body.accepted + body.duplicates;
          else failures++;
        } catch {
          failures++;
        }
        latencies.push(performance.now() - t0);
      }
    }
    process.send({ cmd: 'started' });
    await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
    latencies.sort((a, b) => a - b);
    process.send({
      cmd: 'done',
      accepted,
      failures,
      ms: performance.now() - started,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    });
    setImmediate(() => process.exit(0));
  });
}

// ---------- the orchestrator ----------

const { startTopology } = require('../scripts/scale-out');
const { startHaproxy, stopHaproxy } = require('../scripts/scale-out/haproxy');

const DBS = arg('db', 'mariadb,sqlite').split(',');
const ENTRIES = Number(arg('entries', 50_000));
const DURATION_MS = Number(arg('duration', 5)) * 1000;
const CONNECTIONS = Number(arg('connections', 16));
const INGEST_CLIENTS = Number(arg('ingest-clients', 4));
const BATCH = Number(arg('batch', 500));
const live = new Set();
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/** Forks a bench/pages child (load.js, bare.js) with its id-matched IPC, as bench/pages.js does. */
function pagesChild(script) {
  return forkChild(path.join(__dirname, 'pages', script), { live });
}

const target = (url, token) => {
  const { hostname, port } = new URL(url);
  return {
    host: hostname,
    port: Number(port),
    path: '/query',
    headers: { 'content-type': 'application/json', ...(token ? { 'access-token': token } : {}) },
  };
};

/** The machine's CPU time (all cores, ms) so far: for the share the run used. */
function machineCpuMs() {
  return os.cpus().reduce((sum, cpu) => sum + cpu.times.user + cpu.times.sys + cpu.times.irq, 0);
}

/** One closed-loop run against `url`: req/s, p50, p99, the generator's and the machine's CPU. */
async function pages(url, token, { connections = CONNECTIONS, durationMs = DURATION_MS } = {}) {
  const load = pagesChild('load.js');
  try {
    const job = { target: target(url, token), variables: {}, vary: 'variable', connections };
    await load.call('run', { ...job, durationMs: 1000 }); // warm-up
    const machineBefore = machineCpuMs();
    const result = await load.call('run', { ...job, durationMs, expect: '"rank":1' });
    const machineMs = machineCpuMs() - machineBefore;
    const sorted = result.latencies.sort((a, b) => a - b);
    return {
      rps: Math.round((sorted.length / result.wallMs) * 1000),
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      errors: result.errors,
      firstError: result.firstError,
      clientCpu: result.cpuMs / result.wallMs,
      machineCpu: machineMs / result.wallMs,
    };
  } finally {
    await load.close();
  }
}

/** Pages while the ingest generator posts at full speed through `url`. */
async function pagesUnderIngest(url, token) {
  const ingest = fork(__filename, ['--ingest-child'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(ingest);
  const message = (cmd) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m.cmd === cmd) {
          ingest.off('message', on);
          resolve(m);
        }
      };
      ingest.on('message', on);
    });
  const started = message('started');
  ingest.send({ url, token, clients: INGEST_CLIENTS, batch: BATCH, addresses: ENTRIES * 2 });
  await started;
  const done = message('done');
  const page = await pages(url, token, { connections: 4 });
  ingest.send({ cmd: 'stop' });
  const result = await done;
  live.delete(ingest);
  return {
    page,
    ingest: {
      recordsPerSecond: Math.round((result.accepted / result.ms) * 1000),
      failures: result.failures,
      p50: result.p50,
      p99: result.p99,
    },
  };
}

/** The board: ENTRIES distinct addresses through POST /ingest, in batches of 10,000. */
async function fill(url, token) {
  const started = Date.now();
  const post = async (records) => {
    const response = await fetch(`${url}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify(records),
    });
    if (!response.ok) throw new Error(`fill: HTTP ${response.status} ${await response.text()}`);
  };
  await post([{ type: 'space', id: 1, name: 'Bench' }]);
  for (let start = 0; start < ENTRIES; start += 10_000) {
    const n = Math.min(10_000, ENTRIES - start);
    await post(
      Array.from({ length: n }, (_, i) => ({
        type: 'points',
        key: `fill-${start + i}`,
        spaceId: 1,
        address: `0x${((start + i) * 2).toString(16).padStart(40, '0')}`,
        points: 1 + (((start + i) * 7919) % 5000),
        occurredAt: '2026-03-01T00:00:00Z',
      })),
    );
  }
  return Date.now() - started;
}

async function runDb(db) {
  const instances = db === 'sqlite' ? 1 : 3;
  const log = (line) => process.stderr.write(`[bench] ${line}\n`);
  log(`${db}: starting ${instances} instance(s)`);
  const topology = await startTopology({
    instances,
    database: db,
    env: { RATE_LIMIT_TOKEN: '10000000/1s', RATE_LIMIT_INGEST: '10000000/1s' },
    log,
  });
  const balancers = [];
  try {
    const created = await topology.cli([
      'token',
      'create',
      '--name',
      'bench',
      '--scope',
      'query,ingest',
    ]);
    const token = created.stdout.trim();
    const fillMs = await fill(topology.balancer.url, token);
    log(`${db}: ${ENTRIES} entries in ${fillMs} ms; waiting 2 s for every instance's feed`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const result = { db, instances, fillMs, scaling: [], idle: null, underIngest: null };
    if (db === 'mariadb') {
      // One balancer per instance count, in front of the first 1, 2 or 3 instances.
      for (let n = 1; n <= instances; n++) {
        const balancer =
          n === instances
            ? topology.balancer
            : await startHaproxy({
                dir: topology.dir,
                ports: topology.instances.slice(0, n).map((i) => i.port),
                log: () => undefined,
              });
        if (balancer !== topology.balancer) balancers.push(balancer);
        log(`${db}: pages through haproxy, ${n} instance(s)`);
        result.scaling.push({ instances: n, ...(await pages(balancer.url, token)) });
      }
    }
    log(`${db}: pages (4 connections), idle and while POST /ingest runs at full speed`);
    result.idle = await pages(topology.balancer.url, token, { connections: 4 });
    result.underIngest = await pagesUnderIngest(topology.balancer.url, token);
    return result;
  } finally {
    for (const balancer of balancers) await stopHaproxy(balancer);
    await topology.stop();
  }
}

/** The machine's ceiling: bare node:http answering a captured page, direct and behind haproxy. */
async function bare() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-bench-bare-'));
  const server = pagesChild('bare.js');
  const body = JSON.stringify({ data: { space: { loyaltyPointsRanks: { list: [{ rank: 1 }] } } } });
  const { port } = await server.call('start', { body: body.padEnd(6000, ' ') });
  const balancer = await startHaproxy({ dir, ports: [port], log: () => undefined });
  try {
    return {
      direct: await pages(`http://127.0.0.1:${port}`),
      haproxy: await pages(balancer.url),
    };
  } finally {
    await stopHaproxy(balancer);
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a');
const pct = (v) => `${Math.round(v * 100)}%`;

function report(results, reference) {
  const lines = [];
  lines.push(
    `Machine: ${os.cpus().length} cores (${os.cpus()[0].model}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}. ` +
      `Board of ${ENTRIES} entries, first page of 50, distinct bodies; ${DURATION_MS / 1000} s per figure after 1 s of warm-up.`,
    '',
    '| pages through haproxy | pages/s | p50 | p99 | load generator CPU | machine CPU (of all cores) |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  );
  const row = (name, r) =>
    `| ${name} | ${r.rps} | ${ms(r.p50)} | ${ms(r.p99)} | ${pct(r.clientCpu)} of a core | ${pct(r.machineCpu / os.cpus().length)} |` +
    (r.errors ? ` ${r.errors} errors: ${r.firstError}` : '');
  for (const result of results) {
    for (const s of result.scaling)
      lines.push(row(`${result.db}, ${s.instances} instance(s), ${CONNECTIONS} connections`, s));
  }
  lines.push(row(`bare node:http, direct, ${CONNECTIONS} connections`, reference.direct));
  lines.push(row(`bare node:http behind haproxy, ${CONNECTIONS} connections`, reference.haproxy));
  lines.push(
    '',
    `| page while POST /ingest runs (${INGEST_CLIENTS} clients x ${BATCH} records) | page p50 | page p99 | pages/s | records/s ingested | ingest request p50 / p99 | idle page p50 / p99 |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const result of results) {
    const u = result.underIngest;
    lines.push(
      `| ${result.db}, ${result.instances} instance(s), 4 page connections | ${ms(u.page.p50)} | ${ms(u.page.p99)} | ${u.page.rps} | ${u.ingest.recordsPerSecond}${u.ingest.failures ? ` (${u.ingest.failures} failed requests)` : ''} | ${ms(u.ingest.p50)} / ${ms(u.ingest.p99)} | ${ms(result.idle.p50)} / ${ms(result.idle.p99)} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  const results = [];
  for (const db of DBS) results.push(await runDb(db));
  process.stderr.write('[bench] bare node:http\n');
  const reference = await bare();
  const table = report(results, reference);
  process.stdout.write(`${table}\n`);
  const out = path.join(__dirname, 'results');
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `scale-out-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ results, reference, table }, null, 2));
  process.stderr.write(`[bench] ${file}\n`);
}

if (INGEST_CHILD) ingestChild();
else
  main().then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exit(1);
    },
  );
