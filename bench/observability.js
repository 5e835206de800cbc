#!/usr/bin/env node
// What observability costs on the request path of the real service process (node
// dist/src/host/main.js, as deployed), on SQLite, MariaDB and/or PostgreSQL. Usage (after npx
// nest build):
//   node bench/observability.js [--entries 100000] [--db sqlite|mariadb|postgres|all|both|a,b]
//                               [--duration 10] [--warmup 1] [--rounds 5] [--connections 16]
//                               [--vary comment|variable] [--stdout file|null|pipe]
//                               [--variants floor,info,metrics,tracing,ratio10]
// --db: one database, a comma list, all (the default) or both (SQLite and MariaDB). About 2.5
// minutes per database with the defaults (all: about 7.5); each variant more adds
// 2 x (duration + warm-up).
//
// Variants, each a service process of its own on the same board (all running for the whole run):
//   floor     LOG_LEVEL=warn: no request lines, metrics off, tracing off;
//   info      LOG_LEVEL=info (the default): one JSON line per request on stdout;
//   metrics   info + METRICS_PORT (a listener of its own), scraped once a second by this process
//             while the variant is under load, as Prometheus would;
//   tracing   info + metrics + OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP sink
//             (bench/observability/sink.js, its own process: answers 200 to POST /v1/traces and
//             counts bytes and spans), with the default sampler (parentbased_always_on);
//   ratio10   the same with OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0.1;
//   bare      bare node:http answering the captured bytes of the page (bench/pages/bare.js): the
//             outside reference, for the cached page only (always run).
// Not run unless named in --variants (floor first), to see where a cost lies:
//   info-null    info, stdout to /dev/null;   info-pipe    info, stdout to a pipe (see below);
//   tracing-off    as tracing, with OTEL_TRACES_SAMPLER=always_off (instrumented, no span
//   recorded).
// Pages: "cached", the first 50-entry page with the same body every time (answered from the
// response cache), and "uncached", the same page with a distinct body per request (--vary, as in
// bench/pages.js), so every request runs GraphQL. Every variant runs with NODE_ENV=production and
// the rate limits raised out of the way (RATE_LIMIT_TOKEN=RATE_LIMIT_ADDRESS=1000000/1s).
//
// Where the request lines go (--stdout): 'file' (default) a file in a temporary directory; 'null'
// /dev/null (the write(2) without the disk); 'pipe' a pipe read by `cat`, which copies it into
// the file, as a container runtime's log shim does. Node writes stdout synchronously on Linux, one
// write(2) per line, to a file or a pipe alike; a pipe's write also wakes its reader.
//
// Processes: each service is spawned as `node -r <probe> dist/src/host/main.js` (plus
// `-r dist/src/host/tracing/register.js` first while main.js does not import it itself), each load
// generator is a bench/pages/load.js child (one per measured phase), the bare server and the sink
// are children of their own: this process only orchestrates (and scrapes). The probe
// (bench/observability/probe.js) is idle until SIGWINCH, when it writes the modules the process has
// loaded and its memory (read once, after the load). The phases take turns in --rounds slices of
// --duration / --rounds seconds, the order rotating each round, so that other work on the machine
// hits every variant alike; the per-round ratios to the floor are kept to show the noise. The
// service's CPU is read from /proc/<pid>/stat around each slice, the client's from the load
// generator: on 2 cores a client near 100% of a core is the limit, not the server, and then the
// server CPU per request (not req/s) is the cost.
//
// Results: markdown tables on stdout (progress on stderr), and every figure in
// bench/results/observability-<db>-<timestamp>.json (git-ignored). MariaDB: MARIADB_URL (default
// mysql://root@127.0.0.1:3306) and PostgreSQL: POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) get a scratch database, dropped at the end; SQLite a file in
// a temporary directory. The board (space 1, all-time) is written in SQL by bench/pages/server.js.
/* eslint-disable */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { pageBodies, post, percentile } = require('./pages/http');
const { databasesOf, scratchDatabase } = require('./scratch-database');
const { forkChild } = require('./pages/child');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const ENTRIES = Number(arg('entries', 100_000));
const DBS = databasesOf(arg('db', 'all'));
const DURATION_MS = Number(arg('duration', 10)) * 1000;
const WARMUP_MS = Number(arg('warmup', 1)) * 1000;
const ROUNDS = Number(arg('rounds', 5));
const CONNECTIONS = Number(arg('connections', 16));
const VARY = arg('vary', 'comment');
const STDOUT = arg('stdout', 'file');
const VARIANT_KEYS = arg('variants', 'floor,info,metrics,tracing,ratio10').split(',');
if (
  !DBS ||
  !(ENTRIES >= 1_000) ||
  !(DURATION_MS > 0) ||
  !(ROUNDS >= 1) ||
  !['comment', 'variable'].includes(VARY) ||
  !['file', 'null', 'pipe'].includes(STDOUT) ||
  VARIANT_KEYS[0] !== 'floor'
) {
  console.error(
    'usage: node bench/observability.js [--entries >= 1000] [--db sqlite|mariadb|postgres|all|both|a,b] [--duration s] ' +
      '[--warmup s] [--rounds n] [--connections n] [--vary comment|variable] [--stdout file|null|pipe] ' +
      '[--variants floor,...] (floor first)',
  );
  process.exit(2);
}

const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'dist/src/host/main.js');
const REGISTER = path.join(ROOT, 'dist/src/host/tracing/register.js');
const PROBE = path.join(__dirname, 'observability/probe.js');
const RESULTS = path.join(__dirname, 'results');
const SCRAPE_EVERY_MS = 1000;
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const FIRST_PAGE = '"list":[{"rank":1,';

const LIMITS = { RATE_LIMIT_TOKEN: '1000000/1s', RATE_LIMIT_ADDRESS: '1000000/1s' };
const ALL_VARIANTS = [
  { key: 'floor', label: 'floor: LOG_LEVEL=warn', env: { LOG_LEVEL: 'warn' } },
  { key: 'info', label: 'default: LOG_LEVEL=info', env: { LOG_LEVEL: 'info' } },
  {
    key: 'metrics',
    label: 'info + metrics (scraped 1/s)',
    env: { LOG_LEVEL: 'info' },
    metrics: true,
  },
  {
    key: 'tracing',
    label: 'info + metrics + tracing',
    env: { LOG_LEVEL: 'info' },
    metrics: true,
    tracing: {},
  },
  {
    key: 'ratio10',
    label: 'info + metrics + tracing 10%',
    env: { LOG_LEVEL: 'info' },
    metrics: true,
    tracing: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  },
  // Not run by default (--variants): where the cost of logging and of tracing lies.
  {
    key: 'info-null',
    label: 'LOG_LEVEL=info, stdout /dev/null',
    env: { LOG_LEVEL: 'info' },
    stdout: 'null',
  },
  {
    key: 'info-pipe',
    label: 'LOG_LEVEL=info, stdout a pipe',
    env: { LOG_LEVEL: 'info' },
    stdout: 'pipe',
  },
  {
    key: 'tracing-off',
    label: 'info + metrics + tracing, always_off',
    env: { LOG_LEVEL: 'info' },
    metrics: true,
    tracing: { OTEL_TRACES_SAMPLER: 'always_off' },
  },
];
const VARIANTS = VARIANT_KEYS.map((key) => {
  const variant = ALL_VARIANTS.find((v) => v.key === key);
  if (!variant) {
    console.error(`--variants: no variant ${key} (${ALL_VARIANTS.map((v) => v.key).join(', ')})`);
    process.exit(2);
  }
  return { stdout: STDOUT, ...variant };
});
const stdoutLabel = (stdout) =>
  stdout === 'file'
    ? 'a file'
    : stdout === 'null'
      ? '/dev/null'
      : 'a pipe (cat copying it to a file)';
const PAGES = {
  cached: { label: 'cached page (same body every time: the response cache answers)', vary: false },
  uncached: { label: `uncached page (a distinct body per request: GraphQL runs)`, vary: VARY },
};

const PRODUCTS = { sqlite: 'SQLite', mariadb: 'MariaDB', postgres: 'PostgreSQL' };
const fmt = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? 'n/a'
    : Number(n).toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
const signed = (n, digits = 0) =>
  n === null || Number.isNaN(n) ? 'n/a' : `${n >= 0 ? '+' : ''}${fmt(n, digits)}`;
const log = (...args) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...args);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Child processes: every one is killed when this process ends, however it ends.

const live = new Set();
const cleanups = new Set();
let interrupted = false;
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, async () => {
    interrupted = true;
    log(`${signal}: stopping the children`);
    for (const proc of live) proc.kill('SIGKILL');
    // The scratch database, at most a few seconds.
    await Promise.race([Promise.allSettled([...cleanups].map((c) => c())), sleep(5000)]);
    process.exit(130);
  });
}

/** Forks a bench child (bench/pages/child.js protocol) with an id-matched request/answer channel. */
function child(file) {
  return forkChild(file, { live });
}

const cpuMsOf = (usage) => (usage.user + usage.system) / 1000;
const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time of a process so far (all its threads), in ms, from /proc. */
function procCpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS; // utime, stime
}

/** Busy CPU time of the whole machine so far, in ms summed over cores. */
function machineBusyMs() {
  return os
    .cpus()
    .reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function get(port, route) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get({ host: '127.0.0.1', port, path: route, agent: false }, (response) => {
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    request.on('error', reject);
    request.setTimeout(5000, () => request.destroy(new Error(`GET ${route} timed out`)));
  });
}

// ---------------------------------------------------------------------------------------------
// The service, as deployed: its own process, configured by its environment only.

/** The environment without anything of ours that the service reads (then the variant's). */
function serviceEnv(extra) {
  const env = {};
  const theirs =
    /^(OTEL_|LOG_|METRICS_|DATABASE_|RATE_LIMIT_|RANK_INDEX_|RESPONSE_CACHE_MS$|REDIS_URL$|PORT$|HOST$|NODE_OPTIONS$)/;
  for (const [key, value] of Object.entries(process.env)) if (!theirs.test(key)) env[key] = value;
  return { ...env, ...extra };
}

const mainImportsTracing = () => fs.readFileSync(MAIN, 'utf8').includes('tracing/register');

async function startService(variant, { dbUrl, dir, sinkPorts }) {
  if (interrupted) throw new Error('interrupted');
  const port = await freePort();
  const metricsPort = variant.metrics ? await freePort() : undefined;
  const probeFile = path.join(dir, `${variant.key}.probe.json`);
  const env = serviceEnv({
    NODE_ENV: 'production',
    DATABASE_URL: dbUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    ...LIMITS,
    ...variant.env,
    ...(metricsPort !== undefined ? { METRICS_PORT: String(metricsPort) } : {}),
    ...(variant.tracing
      ? {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPorts[variant.key]}`,
          ...variant.tracing,
        }
      : {}),
    BENCH_PROBE_FILE: probeFile,
  });
  const stdoutFile = path.join(dir, `${variant.key}.stdout.log`);
  const stderrFile = path.join(dir, `${variant.key}.stderr.log`);
  let out = fs.openSync(variant.stdout === 'null' ? '/dev/null' : stdoutFile, 'w');
  let shim;
  if (variant.stdout === 'pipe') {
    // A container runtime's log shim: a process that copies the pipe into a file.
    shim = spawn('cat', [], { stdio: ['pipe', out, 'ignore'] });
    live.add(shim);
    shim.on('exit', () => live.delete(shim));
    fs.closeSync(out);
    out = shim.stdin;
  }
  const err = fs.openSync(stderrFile, 'w');
  const preload = mainImportsTracing() ? [] : ['-r', REGISTER];
  const proc = spawn(process.execPath, [...preload, '-r', PROBE, MAIN], {
    cwd: ROOT,
    env,
    stdio: ['ignore', out, err],
  });
  if (shim)
    shim.stdin.destroy(); // the service holds the pipe's write end now
  else fs.closeSync(out);
  fs.closeSync(err);
  live.add(proc);
  const shimDone = shim ? new Promise((resolve) => shim.on('close', resolve)) : null;
  const exited = new Promise((resolve) =>
    proc.on('exit', (code, signal) => {
      live.delete(proc);
      // Once the shim has copied everything, the file holds every line.
      Promise.resolve(shimDone).then(() => resolve({ code, signal }));
    }),
  );
  const service = {
    variant,
    proc,
    port,
    metricsPort,
    probeFile,
    stdoutFile,
    stderrFile,
    exited,
    requestsSent: 0,
    scrapes: { count: 0, bytes: 0, ms: 0, errors: 0 },
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
    target: (token) => ({
      host: '127.0.0.1',
      port,
      path: '/query',
      headers: { 'content-type': 'application/json', 'access-token': token },
    }),
  };
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `${variant.key}: the service exited (${proc.exitCode ?? proc.signalCode}):\n${tail(stderrFile)}`,
      );
    }
    const answer = await get(port, '/health/ready').catch(() => null);
    if (answer?.status === 200) break;
    if (performance.now() > deadline)
      throw new Error(
        `${variant.key}: not ready after ${READY_TIMEOUT_MS} ms:\n${tail(stderrFile)}`,
      );
    await sleep(100);
  }
  return service;
}

function tail(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/** What the probe says: the modules loaded, and memory. */
async function probe(service) {
  fs.rmSync(service.probeFile, { force: true });
  service.proc.kill('SIGWINCH');
  for (let i = 0; i < 50; i++) {
    await sleep(50);
    try {
      return JSON.parse(fs.readFileSync(service.probeFile, 'utf8'));
    } catch {}
  }
  return null;
}

async function stopService(service) {
  service.agent.destroy();
  if (service.proc.exitCode === null && service.proc.signalCode === null) {
    service.proc.kill('SIGTERM');
    const timer = setTimeout(() => service.proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    service.exit = await service.exited;
    clearTimeout(timer);
  }
}

/** One scrape of GET /metrics, as Prometheus does it (a new connection each time is fine). */
async function scrape(service) {
  try {
    const answer = await get(service.metricsPort, '/metrics');
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
    service.scrapes.count++;
    service.scrapes.bytes += Buffer.byteLength(answer.body);
    service.scrapes.ms += answer.ms;
    return answer.body;
  } catch {
    service.scrapes.errors++;
    return null;
  }
}

/** Sum of loyalty_http_requests_total{route="/query"} in a scrape. */
function queryRequestsCounted(text) {
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('loyalty_http_requests_total{') && line.includes('route="/query"'))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** Lines and bytes the service wrote to stdout (to a file, or through the shim to a file). */
async function stdoutLines(service) {
  if (service.variant.stdout === 'null') return null;
  let lines = 0;
  let requestLines = 0;
  let bytes = 0;
  let rest = '';
  for await (const chunk of fs.createReadStream(service.stdoutFile, 'utf8')) {
    bytes += Buffer.byteLength(chunk);
    const parts = (rest + chunk).split('\n');
    rest = parts.pop();
    for (const line of parts) {
      lines++;
      if (line.includes('"msg":"request"')) requestLines++;
    }
  }
  return { lines, requestLines, bytes };
}

// ---------------------------------------------------------------------------------------------
// Measurement

/**
 * Closed-loop load on each phase ({ key, page, target, vary, cpuMs(), extraCpuMs()?, onStart?, onEnd? }), one
 * load generator each: a warm-up, then `rounds` slices of DURATION_MS / rounds per phase, the
 * phases taking turns (the order rotating every round). Per phase: req/s, latency percentiles,
 * server CPU per request, CPU shares (server, client, the rest of the machine), per-round req/s.
 */
async function measure(phases, rounds, token) {
  const generators = phases.map(() => child(path.join(__dirname, 'pages/load.js')));
  const job = (phase, durationMs) => ({
    target: phase.target,
    variables: {},
    vary: phase.vary,
    expect: FIRST_PAGE,
    connections: CONNECTIONS,
    durationMs,
  });
  const totals = phases.map(() => ({
    latencies: [],
    errors: 0,
    firstError: null,
    wallMs: 0,
    serverMs: 0,
    clientMs: 0,
    machineMs: 0,
    extraMs: 0,
    roundRps: [],
  }));
  const slice = async (i, durationMs, total) => {
    const phase = phases[i];
    phase.onStart?.();
    const cpuBefore = await phase.cpuMs();
    const extraBefore = (await phase.extraCpuMs?.()) ?? 0;
    const machineBefore = machineBusyMs();
    const result = await generators[i].call('run', job(phase, durationMs));
    const machineAfter = machineBusyMs();
    const cpuAfter = await phase.cpuMs();
    const extraAfter = (await phase.extraCpuMs?.()) ?? 0;
    phase.onEnd?.();
    if (phase.service) phase.service.requestsSent += result.latencies.length + result.errors;
    if (!total) return;
    total.machineMs += machineAfter - machineBefore;
    total.serverMs += cpuAfter - cpuBefore;
    total.extraMs += extraAfter - extraBefore;
    total.clientMs += result.cpuMs;
    total.wallMs += result.wallMs;
    total.errors += result.errors;
    total.firstError = total.firstError ?? result.firstError;
    for (const ms of result.latencies) total.latencies.push(ms);
    total.roundRps.push(result.latencies.length / (result.wallMs / 1000));
  };
  try {
    for (let i = 0; i < phases.length; i++) await slice(i, WARMUP_MS, null);
    for (let round = 0; round < rounds; round++) {
      log(`  round ${round + 1}/${rounds}`);
      for (let k = 0; k < phases.length; k++) {
        const i = (round + k) % phases.length;
        await slice(i, DURATION_MS / rounds, totals[i]);
      }
    }
  } finally {
    await Promise.all(generators.map((g) => g.close()));
  }
  return totals.map((t) => {
    const sorted = t.latencies.sort((a, b) => a - b);
    const share = (ms) => Math.round((100 * ms) / t.wallMs);
    const round2 = (x) => Math.round(x * 100) / 100;
    if (t.errors > 0) log(`  ${t.errors} errors, first: ${t.firstError}`);
    return {
      requests: sorted.length,
      errors: t.errors,
      firstError: t.firstError,
      seconds: round2(t.wallMs / 1000),
      rps: round2(sorted.length / (t.wallMs / 1000)),
      roundRps: t.roundRps.map(round2),
      p50: round2(percentile(sorted, 50)),
      p90: round2(percentile(sorted, 90)),
      p99: round2(percentile(sorted, 99)),
      max: round2(sorted[sorted.length - 1] ?? NaN),
      serverCpuUsPerRequest: round2((1000 * t.serverMs) / sorted.length),
      serverCpu: share(t.serverMs),
      clientCpu: share(t.clientMs),
      extraCpu: share(t.extraMs),
      otherCpu: Math.max(0, share(t.machineMs - t.serverMs - t.clientMs - t.extraMs)),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// One database

async function runDb(kind, machine) {
  const started = performance.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-observability-'));
  const db = await scratchDatabase(kind, 'bench_observability');
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await db.drop();
  };
  cleanups.add(drop);
  const services = [];
  let sink;
  let bare;
  const r = {
    db: kind,
    entries: ENTRIES,
    machine,
    settings: {
      durationSeconds: DURATION_MS / 1000,
      warmupSeconds: WARMUP_MS / 1000,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      vary: VARY,
      stdout: STDOUT,
      tracingPreloaded: !mainImportsTracing(),
    },
    variants: {},
  };
  try {
    log(`${kind}: writing a board of ${fmt(ENTRIES)} entries`);
    const filler = child(path.join(__dirname, 'pages/server.js'));
    await filler.call('start', { env: { DATABASE_URL: db.url } });
    const fill = await filler.call('fill', { entries: ENTRIES });
    await filler.close();
    r.fillSeconds = +(fill.fillMs / 1000).toFixed(1);
    const token = fill.queryToken;

    sink = child(path.join(__dirname, 'observability/sink.js'));
    const traced = VARIANTS.filter((v) => v.tracing).map((v) => v.key);
    const { ports: sinkPorts } = await sink.call('start', { names: traced });
    for (const variant of VARIANTS) {
      const t0 = performance.now();
      services.push(await startService(variant, { dbUrl: db.url, dir, sinkPorts }));
      log(`${kind}: ${variant.key} ready in ${fmt(performance.now() - t0)} ms`);
    }

    // The page's bytes, for the bare server; also checks the board is there.
    const floor = services[0];
    const captured = await post(floor.agent, floor.target(token), pageBodies({}, false)());
    floor.requestsSent++;
    if (captured.status !== 200 || !captured.body.includes(FIRST_PAGE))
      throw new Error(`first page: HTTP ${captured.status}: ${captured.body.slice(0, 300)}`);
    r.responseBytes = Buffer.byteLength(captured.body);
    bare = child(path.join(__dirname, 'pages/bare.js'));
    const { port: barePort } = await bare.call('start', { body: captured.body });

    // Prometheus's scrapes: once a second while a metrics variant is under load.
    const scraping = (service) => {
      if (!service.metricsPort) return {};
      let timer = null;
      return {
        onStart: () => {
          timer ??= setInterval(() => void scrape(service), SCRAPE_EVERY_MS);
        },
        onEnd: () => {
          clearInterval(timer);
          timer = null;
        },
      };
    };
    const phases = [];
    for (const [page, { vary }] of Object.entries(PAGES)) {
      for (const service of services) {
        const sinkCpu = service.variant.tracing
          ? { extraCpuMs: async () => cpuMsOf(await sink.call('cpu')) }
          : {};
        phases.push({
          key: service.variant.key,
          page,
          service,
          target: service.target(token),
          vary,
          cpuMs: async () => procCpuMs(service.proc.pid),
          ...scraping(service),
          ...sinkCpu,
        });
      }
    }
    phases.push({
      key: 'bare',
      page: 'cached',
      target: {
        host: '127.0.0.1',
        port: barePort,
        path: '/query',
        headers: { 'content-type': 'application/json' },
      },
      vary: false,
      cpuMs: async () => cpuMsOf(await bare.call('cpu')),
    });
    log(
      `${kind}: ${phases.length} phases, ${fmt(WARMUP_MS / 1000)} s warm-up each, then ${ROUNDS} rounds of ${fmt(DURATION_MS / ROUNDS / 1000, 1)} s slices`,
    );
    const results = await measure(phases, ROUNDS, token);

    // What each variant did besides answering: log lines, scrapes, spans; what it loaded.
    for (const service of services) {
      const key = service.variant.key;
      const v = (r.variants[key] = {
        label: service.variant.label,
        env: service.variant.env,
        stdout: service.variant.stdout,
      });
      v.probe = await probe(service);
      if (service.metricsPort) {
        const text = await scrape(service);
        v.metricsQueryRequests = text === null ? null : queryRequestsCounted(text);
      }
    }
    const sinkBefore = await sink.call('stats');
    await Promise.all(services.map(stopService));
    // Give the last exports (flushed at SIGTERM) a moment to be counted.
    await sleep(200);
    const sinkAfter = await sink.call('stats');
    for (const service of services) {
      const v = r.variants[service.variant.key];
      v.requestsSent = service.requestsSent;
      v.stdoutLines = await stdoutLines(service);
      v.scrapes = service.scrapes;
      v.exit = service.exit ?? 'before the end of the run';
      if (v.exit.code !== 0 && v.exit.signal !== 'SIGTERM')
        log(
          `${service.variant.key} exited ${JSON.stringify(v.exit)}:\n${tail(service.stderrFile)}`,
        );
      const sunk = sinkAfter[service.variant.key];
      if (sunk)
        v.sink = { ...sunk, spansAtShutdown: sunk.spans - sinkBefore[service.variant.key].spans };
      v.stderr = tail(service.stderrFile, 5);
    }
    r.results = phases.map((phase, i) => ({ variant: phase.key, page: phase.page, ...results[i] }));
  } finally {
    for (const service of services) await stopService(service).catch(() => {});
    await sink?.close().catch(() => {});
    await bare?.close().catch(() => {});
    await drop().catch((error) => log(`dropping the scratch database: ${error.message}`));
    cleanups.delete(drop);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  r.seconds = Math.round((performance.now() - started) / 1000);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Output

function table(r, page) {
  const rows = r.results.filter((x) => x.page === page);
  const floor = rows.find((x) => x.variant === 'floor');
  const roundRange = (x) => {
    const ratios = x.roundRps.map((rps, i) => (100 * rps) / floor.roundRps[i]);
    return `${fmt(Math.min(...ratios))}-${fmt(Math.max(...ratios))}`;
  };
  const lines = [
    `| variant | req/s | p50 ms | p99 ms | req/s vs floor (per round) | +µs/req (1/req/s) | server CPU µs/req | +CPU µs/req | server CPU | client CPU | other |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
  ];
  for (const x of rows) {
    const label = x.variant === 'bare' ? 'bare node:http, same bytes' : r.variants[x.variant].label;
    const isFloor = x === floor;
    const vsFloor = isFloor ? '100%' : `${fmt((100 * x.rps) / floor.rps, 1)}% (${roundRange(x)})`;
    const addedWall = isFloor ? '' : signed(1e6 / x.rps - 1e6 / floor.rps, 1);
    const addedCpu = isFloor
      ? ''
      : signed(x.serverCpuUsPerRequest - floor.serverCpuUsPerRequest, 1);
    const other = x.extraCpu ? `${x.otherCpu}% (+sink ${x.extraCpu}%)` : `${x.otherCpu}%`;
    lines.push(
      `| ${label}${x.errors ? ` (${x.errors} errors)` : ''} | ${fmt(x.rps)} | ${fmt(x.p50, 2)} | ${fmt(x.p99, 2)} | ${vsFloor} | ${addedWall} | ${fmt(x.serverCpuUsPerRequest)} | ${addedCpu} | ${x.serverCpu}% | ${x.clientCpu}% | ${other} |`,
    );
  }
  return lines;
}

function report(r) {
  const lines = [];
  const s = r.settings;
  lines.push(
    '',
    `## ${PRODUCTS[r.db]}: ${fmt(r.entries)} entries (written in ${r.fillSeconds} s), run ${r.seconds} s`,
    '',
    `${s.connections} connections, ${s.durationSeconds} s per phase after ${s.warmupSeconds} s warm-up, interleaved in ${s.rounds} rounds; ` +
      `page ${fmt(r.responseBytes)} bytes; request lines to ${stdoutLabel(STDOUT)}` +
      (s.tracingPreloaded
        ? '; tracing/register.js preloaded with -r (main.js does not import it yet)'
        : ''),
  );
  for (const [page, { label }] of Object.entries(PAGES)) {
    lines.push('', `### ${label}`, '', ...table(r, page));
  }
  lines.push(
    '',
    "server/client CPU: % of one core (the client near 100%: its limit, not the server's); other: the rest of the machine; " +
      "+µs/req: 1/throughput against the floor's, and server CPU per request against the floor's.",
  );
  // Checks and side costs.
  const notes = [];
  for (const [key, v] of Object.entries(r.variants)) {
    const parts = [];
    const out = v.stdoutLines;
    if (out) {
      const n = out.requestLines ?? out.lines;
      parts.push(
        `${fmt(n)} ${out.requestLines !== undefined ? 'request ' : ''}lines to ${stdoutLabel(v.stdout)} for ${fmt(v.requestsSent)} requests` +
          (n > 0 ? ` (${fmt(out.bytes / Math.max(1, out.lines))} B/line)` : ''),
      );
    } else parts.push(`${fmt(v.requestsSent)} requests, stdout to ${stdoutLabel(v.stdout)}`);
    if (v.scrapes.count > 0 || v.scrapes.errors > 0)
      parts.push(
        `${v.scrapes.count} scrapes (${fmt(v.scrapes.bytes / v.scrapes.count / 1024, 1)} KiB, ${fmt(v.scrapes.ms / v.scrapes.count, 1)} ms each${v.scrapes.errors ? `, ${v.scrapes.errors} failed` : ''}), ` +
          `then loyalty_http_requests_total{route="/query"} = ${fmt(v.metricsQueryRequests)}`,
      );
    if (v.sink) {
      const k = v.sink;
      parts.push(
        `OTLP sink: ${fmt(k.posts)} exports, ${fmt(k.bytes / Math.max(1, k.spans))} B/span, ${fmt(k.spans / Math.max(1, k.serverSpans), 1)} spans/trace, ` +
          `${fmt(k.serverSpans)} server spans = ${fmt((100 * k.serverSpans) / Math.max(1, v.requestsSent), 1)}% of requests ` +
          `(${fmt(k.spansAtShutdown)} spans flushed at shutdown${k.undecoded ? `, ${k.undecoded} bodies not decoded` : ''})`,
      );
    }
    if (v.probe) {
      const pkgs = v.probe.openTelemetryPackages;
      parts.push(
        `OpenTelemetry packages loaded: ${pkgs.length <= 2 ? pkgs.join(', ') || 'none' : `${pkgs.length} (SDK, exporter, instrumentations)`}, ` +
          `prom-client ${v.probe.promClientModules > 0 ? 'loaded' : 'not loaded'}, rss ${fmt(v.probe.rssBytes / 2 ** 20)} MiB`,
      );
    }
    notes.push(`- ${key}: ${parts.join('; ')}`);
  }
  const noisy = r.results.filter((x) => x.otherCpu > 15).length;
  if (noisy > 0)
    notes.push(
      `- WARNING: other processes used > 15% of a core during ${noisy} of ${r.results.length} phases (load average ${r.machine.loadavg.join(' ')} before the run): ` +
        'absolute figures are low and noisy; the interleaved ratios and CPU per request hold up better',
    );
  lines.push('', ...notes);
  return lines.join('\n');
}

async function main() {
  if (!fs.existsSync(MAIN)) {
    console.error('dist/src/host/main.js is missing: build first (npx nest build)');
    process.exit(2);
  }
  const machine = {
    cpu: os.cpus()[0].model,
    cores: os.cpus().length,
    node: process.version,
    memGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavg: os.loadavg().map((x) => +x.toFixed(2)),
  };
  console.log(
    `machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, ${machine.memGiB} GiB; load average ${machine.loadavg.join(' ')}`,
  );
  fs.mkdirSync(RESULTS, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (const kind of DBS) {
    if (interrupted) break;
    let r;
    try {
      r = await runDb(kind, machine);
    } catch (error) {
      console.error(`${kind}: ${error.stack ?? error}`);
      process.exitCode = 1;
      continue;
    }
    r.loadavgAfter = os.loadavg().map((x) => +x.toFixed(2));
    const json = path.join(RESULTS, `observability-${kind}-${stamp}.json`);
    fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
    console.log(report(r));
    console.log(`\nwritten: ${path.relative(process.cwd(), json)}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
