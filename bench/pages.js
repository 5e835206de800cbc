#!/usr/bin/env node
// Leaderboard page throughput and latency on a large board (default 1,000,000 entries), against
// the targets of the rank index, on SQLite, MariaDB and/or PostgreSQL. Usage (after npm run build):
//   npm run bench -- [--entries 1000000] [--db sqlite|mariadb|postgres|all|both|a,b]
//                    [--duration 5] [--warmup 1] [--rounds 5] [--connections 16]
//                    [--vary variable|comment] [--sweep-requests 30] [--trials 5]
//                    [--profile [--profile-seconds 8]]
// (or node bench/pages.js ...). --db: one database, a comma list, all (the default) or both
// (SQLite and MariaDB). About 2 minutes per database at 1M entries.
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306) gets a scratch database, dropped at
// the end (the board is written with MariaDB's SEQUENCE engine); PostgreSQL: POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) likewise (written from generate_series, then VACUUM
// ANALYZE); SQLite gets a file in a temporary directory. Results: a table on stdout, and
// bench/results/pages-<db>-<timestamp>.json (every figure) and bench/results/pages-<db>.svg (the
// depth sweep), both git-ignored.
//
// Processes. Every instance of the service runs in its own child process (bench/pages/server.js,
// driven over IPC), each load generator in another (bench/pages/load.js: node:http keep-alive
// agents, maxSockets = connections), and the bare node:http baseline in another still
// (bench/pages/bare.js). So a server and its client never share an event loop, the bare baseline
// is measured exactly as the service is, and this process only orchestrates (idle while a load
// runs). On 2 cores that leaves one core to the server and one to the client: the client's CPU
// share is printed, and near 100% the figure is the client's limit, not the server's (expect that
// for the bare baseline, which therefore flatters the service in target 3).
// Measurements that a target compares run interleaved, in --rounds slices each (see measure()), so
// that other work on the machine (a build, a test run: the 'other' column) hits both sides alike.
// The cold-start instance is forked with --expose-gc, so its memory deltas are taken after full
// GCs: nothing needs to be passed to this script. Every child runs with NODE_ENV=production, as the
// Dockerfile deploys the service (graphql-js runs development-only checks otherwise).
//
// What is measured, per database (numbered as the targets):
//  1. full stack (token gate, GraphQL, profiles) req/s, p50, p99 of a 50-entry page at depth 0 and
//     at depth 99% (990,000 of 1M: cursorAfter = the cursor of the entry at rank 990,000), with
//     the rate limits raised (1000000/1s, still enforced); "uncached": every request has a distinct
//     body for the same page, so no response cache keyed by the body can answer it (--vary: an
//     unused variable by default, the query text staying the same as a client's; "comment" appends
//     a "# n" comment, a new query text each time, parsed and validated each time);
//  2. the framework floor (bench/pages/floor.js): a bare NestJS + Apollo app on Fastify, same
//     versions, serving the service's schema.gql and the same first page from memory, with no
//     token check, rate limit, plugin or guard; targets 2a-2c compare the uncached pages with it.
//     A second floor has Apollo's cache-control plugin off, as the service runs: reported beside.
//     Beside it, for where the time goes: our own stack with BoardReader and
//     ProfilesService.loadAddresses answering a fixed page captured from a real answer;
//  3. the same body every time, full stack versus bare node:http sending the captured bytes;
//  4. cold start: RankIndexService.warm() on a fresh instance, time and bytes/entry ('not
//     available' while dist/ has no RankIndexService);
//  5. two instances on one database: a points record through A's POST /ingest that takes rank 1,
//     and the delay until B's first page shows it (polled with the same body and with distinct
//     bodies, alternately);
//  --profile: V8 CPU profiles of the service and of the framework floor under the uncached first
//     page, grouped by what the code is (bench/pages/profile-groups.js);
//  6. naive baselines: the index off (RANK_INDEX_MAX_ENTRIES=0: ranks by SQL COUNT-ahead) and the
//     deprecated offset paging (after: "989999"), and a depth sweep (median of sequential
//     requests at 5 depths, per approach) for the chart.
/* eslint-disable */
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { pageBodies, post, percentile } = require('./pages/http');
const { lineChart } = require('./pages/chart');
const { databasesOf, scratchDatabase } = require('./scratch-database');
const { forkChild } = require('./pages/child');
const { groupProfile } = require('./pages/profile-groups');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const ENTRIES = Number(arg('entries', 1_000_000));
const DBS = databasesOf(arg('db', 'all'));
const DURATION_MS = Number(arg('duration', 5)) * 1000;
const WARMUP_MS = Number(arg('warmup', 1)) * 1000;
const CONNECTIONS = Number(arg('connections', 16));
const VARY = arg('vary', 'variable');
const PROFILE_SECONDS = process.argv.includes('--profile') ? Number(arg('profile-seconds', 8)) : 0;
const SWEEP_REQUESTS = Number(arg('sweep-requests', 30));
const TRIALS = Number(arg('trials', 5));
const ROUNDS = Number(arg('rounds', 5));
if (!DBS || !(ENTRIES >= 10_000)) {
  console.error(
    'usage: node bench/pages.js [--entries >= 10000] [--db sqlite|mariadb|postgres|all|both|a,b] ...',
  );
  process.exit(2);
}
if (!['comment', 'variable'].includes(VARY)) {
  console.error('--vary must be comment or variable');
  process.exit(2);
}

const PAGE_SIZE = 50;
/** "Depth 990,000" of a 1M board: 1% from the end. */
const DEEP = ENTRIES - Math.round(ENTRIES / 100);
const SWEEP_DEPTHS = [
  ...new Set([0, 1_000, Math.round(ENTRIES / 10), Math.round(ENTRIES / 2), DEEP]),
];
/** A sweep point stops after this long once it has 5 samples (OFFSET at depth is slow). */
const SWEEP_POINT_BUDGET_MS = 6_000;
const FRESHNESS_TIMEOUT_MS = 10_000;
const RESULTS = path.join(__dirname, 'results');

// loadConfig's env for the instances: the rate limits out of the way (still enforced, so their
// cost is in the figures), and for the naive baselines the rank index off.
const INDEX_ENV = { RATE_LIMIT_TOKEN: '1000000/1s', RATE_LIMIT_ADDRESS: '1000000/1s' };
const NAIVE_ENV = { ...INDEX_ENV, RANK_INDEX_MAX_ENTRIES: '0' };

// The depth sweep's three ways of reading a page (and the chart's lines).
const APPROACHES = {
  index: { label: 'rank index (cursor)', color: '#1f77b4' },
  countAhead: { label: 'COUNT-ahead (cursor, index off)', color: '#ff7f0e' },
  offset: { label: 'OFFSET (after: "n", index off)', color: '#d62728' },
};

const fmt = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? 'n/a'
    : Number(n).toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
const log = (...args) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...args);

// ---------------------------------------------------------------------------------------------
// Child processes

const live = new Set();
process.on('exit', () => {
  for (const proc of live) proc.kill();
});

/** Forks bench/pages/<script> with an id-matched request/answer channel over IPC. */
function child(script, execArgv = []) {
  return forkChild(path.join(__dirname, 'pages', script), { execArgv, live });
}

/** A service instance on the scratch database, listening on a loopback port. */
async function startServer(db, env, { gc = false, jit = false } = {}) {
  const server = child('server.js', gc ? ['--expose-gc'] : []);
  server.info = await server.call('start', { env: { DATABASE_URL: db.url, ...env }, jit });
  server.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  server.target = (token, route = '/query') => ({
    host: '127.0.0.1',
    port: server.info.port,
    path: route,
    headers: { 'content-type': 'application/json', 'access-token': token },
  });
  const close = server.close;
  server.close = async () => {
    server.agent.destroy();
    await close();
  };
  return server;
}

/**
 * A server of fixed answers in its own process: `floor.js` (bare NestJS + Apollo answering `page`
 * from memory) or `bare.js` (node:http sending `body`); `args` goes to its start command.
 */
async function startFixed(script, args) {
  const server = child(script);
  const { port } = await server.call('start', args);
  server.target = () => ({
    host: '127.0.0.1',
    port,
    path: '/query',
    headers: { 'content-type': 'application/json' },
  });
  return server;
}

const cpuMsOf = (usage) => (usage.user + usage.system) / 1000;

/**
 * Closed-loop measurements of several `phases` ({ server, target, variables, vary?, expect? }),
 * one load-generator process each. After a warm-up of each, the phases take turns in `rounds`
 * slices of DURATION_MS / rounds (the order rotating every round), so that a change in the rest
 * of the machine's load hits every phase alike: the ratios of the targets compare phases measured
 * in the same seconds. Per phase: req/s, latency percentiles, and CPU as a share of one core over
 * its own slices: its server process, the load generator, and `otherCpu`, what the rest of the
 * machine used meanwhile (a build, a test run), which makes a figure noisy when it is not near 0.
 */
async function measure(phases, rounds) {
  const generators = phases.map(() => child('load.js'));
  const job = (phase, durationMs) => ({
    target: phase.target,
    variables: phase.variables,
    vary: phase.vary ?? VARY,
    expect: phase.expect,
    connections: CONNECTIONS,
    durationMs,
  });
  try {
    for (const [i, phase] of phases.entries())
      await generators[i].call('run', job(phase, WARMUP_MS));
    const totals = phases.map(() => ({
      latencies: [],
      errors: 0,
      firstError: null,
      wallMs: 0,
      serverMs: 0,
      clientMs: 0,
      machineMs: 0,
    }));
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < phases.length; k++) {
        const i = (round + k) % phases.length;
        const total = totals[i];
        const cpuBefore = await phases[i].server.call('cpu');
        const machineBefore = machineBusyMs();
        const slice = await generators[i].call('run', job(phases[i], DURATION_MS / rounds));
        const cpuAfter = await phases[i].server.call('cpu');
        total.machineMs += machineBusyMs() - machineBefore;
        total.serverMs += cpuMsOf(cpuAfter) - cpuMsOf(cpuBefore);
        total.clientMs += slice.cpuMs;
        total.wallMs += slice.wallMs;
        total.errors += slice.errors;
        total.firstError = total.firstError ?? slice.firstError;
        for (const ms of slice.latencies) total.latencies.push(ms);
      }
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
        rounds,
        rps: round2(sorted.length / (t.wallMs / 1000)),
        // Answers per CPU-second of the server process: steadier than req/s when other work
        // takes CPU from the server (see the 'other' column).
        perCpuSecond: round2(sorted.length / (t.serverMs / 1000)),
        p50: round2(percentile(sorted, 50)),
        p90: round2(percentile(sorted, 90)),
        p99: round2(percentile(sorted, 99)),
        max: round2(sorted[sorted.length - 1] ?? NaN),
        serverCpu: share(t.serverMs),
        clientCpu: share(t.clientMs),
        otherCpu: Math.max(0, share(t.machineMs - t.serverMs - t.clientMs)),
      };
    });
  } finally {
    await Promise.all(generators.map((g) => g.close()));
  }
}

/** Busy CPU time of the whole machine so far, in ms summed over cores. */
function machineBusyMs() {
  return os
    .cpus()
    .reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
}

// ---------------------------------------------------------------------------------------------
// Sequential requests from this process

async function gql(server, token, body) {
  const answer = await post(server.agent, server.target(token), body);
  let json;
  try {
    json = JSON.parse(answer.body);
  } catch {
    throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
  }
  if (answer.status !== 200 || json.errors)
    throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 500)}`);
  return { ms: answer.ms, data: json.data, body: answer.body };
}

const firstRankIs = (depth) => `"list":[{"rank":${depth + 1},`;

/** Variables of a 50-entry page at `depth` (its first entry has rank depth + 1). */
function pageVariables(paging, depth, cursors) {
  if (depth === 0) return {};
  return paging === 'offset' ? { skip: String(depth - 1) } : { after: cursors[depth] };
}

/** The cursor of the entry at rank `depth` for each depth, read through offset pages of size 1. */
async function fetchCursors(server, token) {
  const query = `query($skip: String) { space(id: 1) { loyaltyPointsRanks(first: 1, after: $skip) {
    list { rank } pageInfo { endCursor } } } }`;
  const cursors = {};
  for (const depth of SWEEP_DEPTHS.filter((d) => d > 0)) {
    const { data } = await gql(
      server,
      token,
      JSON.stringify({ query, variables: { skip: String(depth - 2) } }),
    );
    const page = data.space.loyaltyPointsRanks;
    if (page.list[0]?.rank !== depth)
      throw new Error(`offset page at ${depth}: rank ${page.list[0]?.rank}`);
    cursors[depth] = page.pageInfo.endCursor;
  }
  return cursors;
}

/** Median latency of up to SWEEP_REQUESTS sequential distinct requests per depth (5 warm-ups). */
async function sweep(server, token, paging, cursors) {
  const points = [];
  for (const depth of SWEEP_DEPTHS) {
    const bodyOf = pageBodies(
      pageVariables(paging, depth, cursors),
      VARY,
      `sweep-${paging}-${Date.now()}`,
    );
    const times = [];
    const started = performance.now();
    for (let i = 0; i < SWEEP_REQUESTS + 5; i++) {
      const answer = await gql(server, token, bodyOf(i));
      if (!answer.body.includes(firstRankIs(depth)))
        throw new Error(`sweep: wrong page at ${depth}`);
      if (i >= 5) times.push(answer.ms);
      if (times.length >= 5 && performance.now() - started > SWEEP_POINT_BUDGET_MS) break;
    }
    times.sort((a, b) => a - b);
    points.push({ depth, medianMs: +percentile(times, 50).toFixed(2), requests: times.length });
  }
  return points;
}

/**
 * Part 5: a points record through A's POST /ingest that takes rank 1, then B's first page polled
 * back to back, alternating the same body (what a polling dashboard sends; a response cache would
 * answer it) and a distinct body, until each shows the address. Delays count from A's answer.
 */
async function freshness(a, b, tokens) {
  const same = pageBodies({}, false)();
  const distinct = pageBodies({}, VARY, `fresh-${Date.now()}`);
  const ingest = a.target(tokens.ingestToken, '/ingest');
  const run = `${process.pid}${Date.now() % 100000}`;
  for (let i = 0; i < 3; i++) await gql(b, tokens.queryToken, same);
  const trials = [];
  for (let i = 0; i < TRIALS; i++) {
    const address = `0xBenchFresh${run}x${i}`;
    const record = {
      type: 'points',
      key: `bench-pages-${run}-${i}`,
      spaceId: 1,
      address,
      points: 100_000_000 + i * 1_000_000, // more than anyone: rank 1
      occurredAt: new Date().toISOString(),
    };
    const sent = performance.now();
    const answer = await post(a.agent, ingest, JSON.stringify([record]));
    const acked = performance.now();
    if (answer.status !== 200 || JSON.parse(answer.body).accepted !== 1)
      throw new Error(`ingest: HTTP ${answer.status} ${answer.body.slice(0, 300)}`);
    const seen = { same: null, distinct: null };
    let polls = 0;
    while (
      (seen.same === null || seen.distinct === null) &&
      performance.now() - acked < FRESHNESS_TIMEOUT_MS
    ) {
      const kind = polls % 2 === 0 ? 'same' : 'distinct';
      const { data } = await gql(b, tokens.queryToken, kind === 'same' ? same : distinct(polls));
      polls++;
      const top = data.space.loyaltyPointsRanks.list[0]?.address?.address ?? '';
      if (seen[kind] === null && top.toLowerCase() === address.toLowerCase())
        seen[kind] = performance.now() - acked;
    }
    trials.push({
      ingestMs: +(acked - sent).toFixed(2),
      sameBodyMs: seen.same === null ? null : +seen.same.toFixed(2),
      distinctBodyMs: seen.distinct === null ? null : +seen.distinct.toFixed(2),
      polls,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const worst = (key) =>
    trials.some((t) => t[key] === null) ? null : Math.max(...trials.map((t) => t[key]));
  return { trials, maxSameBodyMs: worst('sameBodyMs'), maxDistinctBodyMs: worst('distinctBodyMs') };
}

/**
 * --profile: V8's CPU profile of `server` under the uncached first page (one load generator,
 * PROFILE_SECONDS), written to bench/results/pages-<name>.cpuprofile and grouped (pages/profile-groups.js).
 * The profiler's sampling slows the server: compare the groups' shares, not these req/s.
 */
async function profile(server, target, name) {
  const load = child('load.js');
  try {
    const job = (durationMs) => ({
      target,
      variables: {},
      vary: VARY,
      expect: firstRankIs(0),
      connections: CONNECTIONS,
      durationMs,
    });
    await load.call('run', job(WARMUP_MS));
    const file = path.join(RESULTS, `pages-${name}.cpuprofile`);
    await server.call('profileStart');
    const run = await load.call('run', job(PROFILE_SECONDS * 1000));
    await server.call('profileStop', { file });
    return {
      file: path.relative(process.cwd(), file),
      ...groupProfile(file, run.latencies.length),
    };
  } finally {
    await load.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Databases

// ---------------------------------------------------------------------------------------------
// One database

async function runDb(kind, machine) {
  const started = performance.now();
  const db = await scratchDatabase(kind, 'loyalty_bench_pages');
  const servers = [];
  const start = async (env, options) => {
    const server = await startServer(db, env, options);
    servers.push(server);
    return server;
  };
  const r = {
    db: kind,
    entries: ENTRIES,
    deepDepth: DEEP,
    machine,
    load: {},
    sweep: {},
    failures: [],
  };
  if (db.bufferPoolBytes) r.innodbBufferPoolBytes = db.bufferPoolBytes;
  if (db.sharedBuffersBytes) r.sharedBuffersBytes = db.sharedBuffersBytes;
  r.options = {
    durationMs: DURATION_MS,
    warmupMs: WARMUP_MS,
    connections: CONNECTIONS,
    vary: VARY,
    rounds: ROUNDS,
    pageSize: PAGE_SIZE,
  };
  try {
    // Setup: migrations, the board and two tokens, then the cursors of the sweep depths.
    log(`${kind}: filling ${fmt(ENTRIES)} entries and profiles`);
    // Index off here: the cursor reads would start an index load that close() then cuts short.
    const setup = await start(NAIVE_ENV);
    const tokens = await setup.call('fill', { entries: ENTRIES });
    r.fillSeconds = +(tokens.fillMs / 1000).toFixed(1);
    const cursors = await fetchCursors(setup, tokens.queryToken);
    await setup.close();
    const token = tokens.queryToken;
    const deepCursor = { after: cursors[DEEP] };

    // Each part on its own: a failing part is reported (r.failures) and the others still run.
    const part = async (name, fn) => {
      log(`${kind}: ${name}`);
      try {
        await fn();
      } catch (error) {
        log(`${kind}: ${name} FAILED: ${error.stack ?? error}`);
        r.failures.push(`${name}: ${String(error.message ?? error).slice(0, 500)}`);
      }
    };

    // 4. Cold start, on a fresh instance with --expose-gc.
    await part('cold start', async () => {
      const cold = await start(INDEX_ENV, { gc: true });
      r.rankIndex = cold.info.rankIndex;
      r.coldStart = {
        appStartMs: +cold.info.startMs.toFixed(0),
        ...(await cold.call('coldStart')),
      };
      await cold.close();
    });

    // 1. Uncached pages through the full stack, rank index on, and 2. the framework floor: bare
    // NestJS + Apollo (bench/pages/floor.js) answering the same first page from memory; beside
    // them our own stack answering a fixed page (no data work for it). Interleaved (see measure).
    // Then 3. the same body every time, full stack versus bare node:http sending the captured
    // bytes, interleaved too.
    await part('full stack: index on, framework floor, same body vs bare node:http', async () => {
      const a = await start(INDEX_ENV);
      // What the first user of a fresh instance waits for a deep page (before any warm()).
      r.firstDeepPageOnFreshInstanceMs = +(
        await gql(a, token, pageBodies(deepCursor, VARY)(0))
      ).ms.toFixed(1);
      r.warm = await a.call('warm');
      const captured = (await gql(a, token, pageBodies({}, false)())).body;
      r.responseBytes = Buffer.byteLength(captured);
      const nest = await startFixed('floor.js', {
        page: JSON.parse(captured).data.space.loyaltyPointsRanks,
      });
      const tuned = await startFixed('floor.js', {
        page: JSON.parse(captured).data.space.loyaltyPointsRanks,
        cacheControl: false,
      });
      servers.push(nest, tuned);
      for (const fixed of [nest, tuned]) {
        const answer = await post(a.agent, fixed.target(), pageBodies({}, false)());
        if (answer.body !== captured)
          throw new Error(`the framework floor answers other bytes: ${answer.body.slice(0, 300)}`);
      }
      const floor = await start(INDEX_ENV);
      r.floorPage = await floor.call('floor');
      [r.load.indexFirst, r.load.indexDeep, r.load.nestFloor, r.load.tunedFloor, r.load.floor] =
        await measure(
          [
            { server: a, target: a.target(token), variables: {}, expect: firstRankIs(0) },
            {
              server: a,
              target: a.target(token),
              variables: deepCursor,
              expect: firstRankIs(DEEP),
            },
            { server: nest, target: nest.target(), variables: {}, expect: firstRankIs(0) },
            { server: tuned, target: tuned.target(), variables: {}, expect: firstRankIs(0) },
            { server: floor, target: floor.target(token), variables: {}, expect: firstRankIs(0) },
          ],
          ROUNDS,
        );
      if (PROFILE_SECONDS > 0) {
        r.profile = {
          service: await profile(a, a.target(token), `${kind}-service`),
          floor: await profile(nest, nest.target(), `${kind}-floor`),
        };
      }
      await nest.close();
      await tuned.close();
      r.floorPage.calls = await floor.call('floorCalls');
      await floor.close();
      r.sweep.index = await sweep(a, token, 'cursor', cursors);

      const bare = await startFixed('bare.js', { body: captured });
      servers.push(bare);
      [r.load.repeatedFull, r.load.repeatedBare] = await measure(
        [
          {
            server: a,
            target: a.target(token),
            variables: {},
            vary: false,
            expect: firstRankIs(0),
          },
          {
            server: bare,
            target: bare.target(),
            variables: {},
            vary: false,
            expect: firstRankIs(0),
          },
        ],
        ROUNDS,
      );
      await bare.close();
      await a.close();
    });

    // Stretch (6 of the issue): compiled execution. The uncached first page and the floor, each
    // with Apollo's execution and with graphql-jit's (bench/pages/jit-plugin.js), interleaved.
    // The bodies vary by an unused variable, not a comment: the query text, and so the compiled
    // query, is the same for every request, as for a client that sends one query with variables.
    await part('stretch: compiled execution (graphql-jit)', async () => {
      const plain = await start(INDEX_ENV);
      const jit = await start(INDEX_ENV, { jit: true });
      const plainFloor = await start(INDEX_ENV);
      const jitFloor = await start(INDEX_ENV, { jit: true });
      await plain.call('warm');
      await jit.call('warm');
      await plainFloor.call('floor');
      await jitFloor.call('floor');
      const phase = (server) => ({
        server,
        target: server.target(token),
        variables: {},
        vary: 'variable',
        expect: firstRankIs(0),
      });
      [r.load.stretchFirst, r.load.stretchJitFirst, r.load.stretchFloor, r.load.stretchJitFloor] =
        await measure([phase(plain), phase(jit), phase(plainFloor), phase(jitFloor)], ROUNDS);
      r.stretchJit = { first: await jit.call('jitStats'), floor: await jitFloor.call('jitStats') };
      for (const server of [plain, jit, plainFloor, jitFloor]) await server.close();
    });

    // 6. Naive baselines: index off (COUNT-ahead), and the deprecated offsets; one after the
    // other (their answers can take longer than a slice).
    await part('naive baselines', async () => {
      const naive = await start(NAIVE_ENV);
      r.naiveRankIndex = naive.info.rankIndex;
      const target = naive.target(token);
      [r.load.countAheadFirst, r.load.countAheadDeep, r.load.offsetDeep] = await measure(
        [
          { server: naive, target, variables: {}, expect: firstRankIs(0) },
          { server: naive, target, variables: deepCursor, expect: firstRankIs(DEEP) },
          {
            server: naive,
            target,
            variables: pageVariables('offset', DEEP),
            expect: firstRankIs(DEEP),
          },
        ],
        1,
      );
      r.sweep.countAhead = await sweep(naive, token, 'cursor', cursors);
      r.sweep.offset = await sweep(naive, token, 'offset', cursors);
      // Entries indexed by the index-off instance: anything but 0 means these were not naive.
      r.naiveIndexedEntries = (await naive.call('stats'))?.entries ?? 0;
      await naive.close();
    });

    // 5. Two instances on the same database (last: it changes the board).
    await part('two instances', async () => {
      const a = await start(INDEX_ENV);
      const b = await start(INDEX_ENV);
      await Promise.all([a.call('warm'), b.call('warm')]);
      r.freshness = await freshness(a, b, tokens);
      await Promise.all([a.close(), b.close()]);
    });
  } finally {
    for (const server of servers) await server.close().catch(() => {});
    await db.drop();
  }
  r.seconds = +((performance.now() - started) / 1000).toFixed(0);
  r.targets = targets(r);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Verdicts and output

function targets(r) {
  const L = r.load;
  const verdict = (ok) => (ok === null ? 'n/a' : ok ? 'PASS' : 'FAIL');
  const ratio = (x, y) => (x && y ? x / y : null);
  const t = [];
  const percent = (x) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
  // Verdicts on req/s as the targets say; in brackets the same ratio per server CPU-second.
  const perCpu = (x, y) => ` (${percent(ratio(x?.perCpuSecond, y?.perCpuSecond))} per CPU-s)`;
  const deepShare = ratio(L.indexDeep?.rps, L.indexFirst?.rps);
  t.push({
    id: 1,
    name: `depth-${fmt(DEEP)} throughput >= 95% of first page`,
    value: deepShare === null ? 'n/a' : percent(deepShare) + perCpu(L.indexDeep, L.indexFirst),
    verdict: verdict(deepShare === null ? null : deepShare >= 0.95),
  });
  const floorShare = ratio(L.indexFirst?.rps, L.nestFloor?.rps);
  t.push({
    id: '2a',
    name: 'uncached first page >= 80% of bare NestJS + Apollo',
    value: floorShare === null ? 'n/a' : percent(floorShare) + perCpu(L.indexFirst, L.nestFloor),
    verdict: verdict(floorShare === null ? null : floorShare >= 0.8),
  });
  const deepFloorShare = ratio(L.indexDeep?.rps, L.nestFloor?.rps);
  t.push({
    id: '2b',
    name: `depth-${fmt(DEEP)} page >= 80% of bare NestJS + Apollo`,
    value:
      deepFloorShare === null ? 'n/a' : percent(deepFloorShare) + perCpu(L.indexDeep, L.nestFloor),
    verdict: verdict(deepFloorShare === null ? null : deepFloorShare >= 0.8),
  });
  const p99Ratio = ratio(L.indexFirst?.p99, L.nestFloor?.p99);
  t.push({
    id: '2c',
    name: 'uncached first page p99 <= 1.5x bare NestJS + Apollo p99',
    value:
      p99Ratio === null
        ? 'n/a'
        : `${p99Ratio.toFixed(2)}x (${fmt(L.indexFirst.p99, 1)} vs ${fmt(L.nestFloor.p99, 1)} ms)`,
    verdict: verdict(p99Ratio === null ? null : p99Ratio <= 1.5),
  });
  const bareShare = ratio(L.repeatedFull?.rps, L.repeatedBare?.rps);
  const p99 = L.repeatedFull?.p99;
  t.push({
    id: 3,
    name: 'repeated page >= 50% of bare node:http, p99 < 20 ms',
    value: bareShare === null ? 'n/a' : `${(100 * bareShare).toFixed(1)}%, p99 ${fmt(p99, 1)} ms`,
    verdict: verdict(bareShare === null ? null : bareShare >= 0.5 && p99 < 20),
  });
  const c = r.coldStart;
  if (c?.available) {
    const heapPerEntry = c.jsDelta / ENTRIES;
    const statsPerEntry = c.statsBytesPerEntry;
    t.push({
      id: 4,
      name: 'cold start warm() < 2 s and < 64 bytes/entry',
      value: `${fmt(c.ms)} ms, ${fmt(statsPerEntry, 1)} B/entry (stats), ${fmt(heapPerEntry, 1)} B/entry (heap)`,
      verdict: verdict(
        c.ms < 2000 && statsPerEntry !== null && statsPerEntry < 64 && heapPerEntry < 64,
      ),
    });
  } else {
    t.push({
      id: 4,
      name: 'cold start warm() < 2 s and < 64 bytes/entry',
      value: 'not available',
      verdict: 'n/a',
    });
  }
  const f = r.freshness;
  const worst = f
    ? f.maxSameBodyMs === null || f.maxDistinctBodyMs === null
      ? null
      : Math.max(f.maxSameBodyMs, f.maxDistinctBodyMs)
    : undefined;
  t.push({
    id: 5,
    name: "two instances: B shows A's write < 1 s (max of trials)",
    value:
      f === undefined
        ? 'n/a'
        : worst === null
          ? `not seen within ${FRESHNESS_TIMEOUT_MS / 1000} s`
          : `${fmt(worst, 1)} ms`,
    verdict: f === undefined ? 'n/a' : verdict(worst !== null && worst < 1000),
  });
  return t;
}

function pad(cells, widths) {
  return cells
    .map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
    .join('  ');
}

function report(r) {
  const L = r.load;
  const lines = [];
  lines.push(
    '',
    `== ${r.db}: ${fmt(r.entries)} entries (filled in ${r.fillSeconds} s), run ${r.seconds} s ==`,
  );
  if (r.innodbBufferPoolBytes)
    lines.push(`innodb_buffer_pool_size ${fmt(r.innodbBufferPoolBytes / 2 ** 20)} MiB`);
  if (r.sharedBuffersBytes) lines.push(`shared_buffers ${fmt(r.sharedBuffersBytes / 2 ** 20)} MiB`);
  lines.push(
    `rank index: ${r.rankIndex}; index-off instance: ${r.naiveRankIndex}, ` +
      `${fmt(r.naiveIndexedEntries)} entries indexed` +
      (r.naiveIndexedEntries > 0 ? ' (NOT NAIVE: RANK_INDEX_MAX_ENTRIES=0 was not honoured)' : ''),
  );
  lines.push(
    `load: ${CONNECTIONS} connections, ${DURATION_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up ` +
      `(the first five rows interleaved in ${ROUNDS} rounds, then the next two); ` +
      `"uncached" = a distinct body per request (${VARY === 'comment' ? 'a "# n" comment' : 'an unused variable'}); ` +
      `page ${fmt(r.responseBytes)} bytes`,
  );
  const w = [44, 9, 9, 9, 7, 9, 7, 7, 7];
  lines.push(
    pad(
      [
        'measurement',
        'req/s',
        'p50 ms',
        'p99 ms',
        'errors',
        'req/CPU-s',
        'srvCPU',
        'cliCPU',
        'other',
      ],
      w,
    ),
  );
  const row = (name, m) =>
    lines.push(
      pad(
        m
          ? [
              name,
              fmt(m.rps, 1),
              fmt(m.p50, 2),
              fmt(m.p99, 2),
              m.errors,
              fmt(m.perCpuSecond),
              `${m.serverCpu}%`,
              `${fmt(m.clientCpu)}%`,
              `${m.otherCpu}%`,
            ]
          : [name, 'n/a', '', '', '', '', '', '', ''],
        w,
      ),
    );
  row('index, first page, uncached', L.indexFirst);
  row(`index, depth ${fmt(DEEP)}, uncached`, L.indexDeep);
  row('framework floor: bare NestJS + Apollo', L.nestFloor);
  row('  the same, Apollo cache-control plugin off', L.tunedFloor);
  row('our stack, fixed page (no data work)', L.floor);
  row('same body every time, full stack', L.repeatedFull);
  row('same body every time, bare node:http', L.repeatedBare);
  row('stretch: first page, Apollo execution *', L.stretchFirst);
  row('stretch: first page, graphql-jit *', L.stretchJitFirst);
  row('stretch: floor, Apollo execution *', L.stretchFloor);
  row('stretch: floor, graphql-jit *', L.stretchJitFloor);
  row('index off (COUNT-ahead), first page', L.countAheadFirst);
  row(`index off (COUNT-ahead), depth ${fmt(DEEP)}`, L.countAheadDeep);
  row(`OFFSET after: "${DEEP - 1}"`, L.offsetDeep);
  lines.push(
    'req/CPU-s: answers per CPU-second of the server process; srvCPU: server process, ' +
      'cliCPU: load generator, other: the rest of the machine (% of one core)',
  );
  const noisy = Object.values(L).filter((m) => m.otherCpu > 15).length;
  if (noisy > 0)
    lines.push(
      `WARNING: other processes used > 15% of a core during ${noisy} measurement(s): those figures are noisy`,
    );
  if (L.indexDeep && L.countAheadDeep && L.offsetDeep) {
    lines.push(
      `index vs naive at depth ${fmt(DEEP)} (req/s): ${(L.indexDeep.rps / L.countAheadDeep.rps).toFixed(1)}x COUNT-ahead, ` +
        `${(L.indexDeep.rps / L.offsetDeep.rps).toFixed(1)}x OFFSET`,
    );
  }
  if (L.stretchFirst && L.stretchJitFirst && L.stretchFloor && L.stretchJitFloor) {
    const x = (a, b) => `${(a.rps / b.rps).toFixed(2)}x`;
    const jit = r.stretchJit?.first;
    lines.push(
      `* stretch (bodies vary by an unused variable): uncached first page with graphql-jit = ${x(L.stretchJitFirst, L.stretchFloor)} the floor ` +
        `(Apollo: ${x(L.stretchFirst, L.stretchFloor)}); the floor itself with graphql-jit = ${x(L.stretchJitFloor, L.stretchFloor)}` +
        (jit ? `; compiled ${jit.compiled}, served ${jit.served}, fell back ${jit.fellBack}` : ''),
    );
  }
  if (L.tunedFloor && L.indexFirst && L.indexDeep)
    lines.push(
      `against the floor with Apollo's cache-control plugin off (as the service runs): first page ` +
        `${((100 * L.indexFirst.rps) / L.tunedFloor.rps).toFixed(1)}%, depth ${fmt(DEEP)} ` +
        `${((100 * L.indexDeep.rps) / L.tunedFloor.rps).toFixed(1)}%, p99 ` +
        `${(L.indexFirst.p99 / L.tunedFloor.p99).toFixed(2)}x`,
    );
  if (r.floorPage)
    lines.push(
      `floor: fixed readPage answered ${fmt(r.floorPage.calls)} times${r.floorPage.calls === 0 ? ' (THE PATCH MISSED THE READ PATH)' : ''}`,
    );
  for (const [name, p] of Object.entries(r.profile ?? {})) {
    lines.push(
      '',
      `CPU profile, ${name === 'service' ? 'the service' : 'the framework floor'}, uncached first page: ` +
        `${fmt(p.usPerRequest)} us of CPU per request over ${fmt(p.requests)} requests (${p.file})`,
    );
    for (const g of p.groups)
      lines.push(
        `  ${g.name.padEnd(52)} ${fmt(g.usPerRequest, 1).padStart(8)} us  ${fmt(g.share, 1).padStart(5)}%`,
      );
  }
  const c = r.coldStart;
  lines.push('');
  if (c?.available) {
    lines.push(
      `cold start: warm() ${fmt(c.ms)} ms; ${fmt(c.statsBytesPerEntry, 1)} bytes/entry (stats: ${fmt(c.stats?.bytes)} B for ${fmt(c.stats?.entries)} entries); ` +
        `${fmt(c.jsDelta / ENTRIES, 1)} bytes/entry (heapUsed+arrayBuffers after GC${c.gcExposed ? '' : ', NO GC'}); ` +
        `rss ${c.rssDelta >= 0 ? '+' : ''}${fmt(c.rssDelta / 2 ** 20)} MiB; longest event-loop stall ${fmt(c.maxEventLoopStallMs)} ms` +
        (c.indexedBeforeWarm
          ? ' (the board was already indexed at start: the build is not in these figures)'
          : ''),
    );
  } else {
    lines.push(`cold start: ${c?.reason ?? 'not available'}`);
  }
  lines.push(
    `app start ${fmt(c?.appStartMs)} ms; first deep page on a fresh instance (before warm) ${fmt(r.firstDeepPageOnFreshInstanceMs, 1)} ms`,
  );
  const f = r.freshness;
  if (f) {
    const ms = (x) => (x === null ? 'not seen' : `${fmt(x, 1)}`);
    lines.push(
      `two instances (ms from A's ingest answer until B's first page shows it; same body / distinct body): ` +
        f.trials.map((t) => `${ms(t.sameBodyMs)}/${ms(t.distinctBodyMs)}`).join(', '),
    );
  }
  lines.push(
    '',
    `depth sweep: median ms of sequential distinct requests (up to ${SWEEP_REQUESTS} per point)`,
  );
  const sw = [12, 22, 32, 32];
  lines.push(pad(['depth', ...Object.values(APPROACHES).map((a) => a.label)], sw));
  for (const [i, depth] of SWEEP_DEPTHS.entries()) {
    lines.push(
      pad(
        [fmt(depth), ...Object.keys(APPROACHES).map((k) => fmt(r.sweep[k]?.[i]?.medianMs, 2))],
        sw,
      ),
    );
  }
  if (r.failures.length > 0) {
    lines.push('', 'FAILED PARTS:');
    for (const failure of r.failures) lines.push(`  ${failure}`);
  }
  lines.push('', 'targets:');
  for (const t of r.targets)
    lines.push(
      `  ${String(t.id).padEnd(2)}. ${t.name.padEnd(58)} ${String(t.value).padEnd(56)} ${t.verdict}`,
    );
  return lines.join('\n');
}

function chart(r) {
  return lineChart({
    title: `Leaderboard page latency by depth (${r.db}, ${fmt(r.entries)} entries)`,
    subtitle: `median of sequential requests, 50-entry pages, full stack; ${r.machine.cpu} x${r.machine.cores}, node ${r.machine.node}`,
    xLabel: 'depth (entries before the page)',
    yLabel: 'latency, ms (log scale)',
    series: Object.entries(APPROACHES).map(([key, a]) => ({
      name: a.label,
      color: a.color,
      points: (r.sweep[key] ?? []).map((p) => ({ x: p.depth, y: p.medianMs })),
    })),
  });
}

async function main() {
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
  const results = [];
  for (const kind of DBS) {
    let r;
    try {
      r = await runDb(kind, machine);
    } catch (error) {
      console.error(`${kind}: ${error.stack ?? error}`);
      process.exitCode = 1;
      continue;
    }
    r.loadavgAfter = os.loadavg().map((x) => +x.toFixed(2));
    const json = path.join(RESULTS, `pages-${kind}-${stamp}.json`);
    const svg = path.join(RESULTS, `pages-${kind}.svg`);
    fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
    fs.writeFileSync(svg, chart(r));
    console.log(report(r));
    console.log(
      `\nwritten: ${path.relative(process.cwd(), json)}, ${path.relative(process.cwd(), svg)}`,
    );
    results.push(r);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
