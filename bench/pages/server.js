// One instance of the service for bench/pages.js, in its own process, driven over IPC:
//   { id, cmd, ...args } -> { id, ok, result | error }
// Commands: start, fill, warm, coldStart, floor, floorCalls, jitStats, cpu, close (see `handlers`).
// The cold-start instance is forked with --expose-gc, so that memory deltas are taken after a GC.
/* eslint-disable */
const { serveParent } = require('./child');
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');
const { getDataSourceToken } = require('@nestjs/typeorm');
const { createApp } = require('../../dist/src/host/app.factory');
const { loadConfig } = require('../../dist/src/host/config/app-config');
const { AccessTokensService } = require('../../dist/src/auth/access-tokens.service');
const { BoardReader } = require('../../dist/src/leaderboards/read/board-reader');
const { ProfilesService } = require('../../dist/src/profiles/profiles.service');
const { query } = require('../../dist/src/storage/statements');
const { untimed } = require('../board-fill');

const RANK_INDEX_MODULE = '../../dist/src/leaderboards/rank-index/rank-index.service';
const BOARD = { spaceId: 1, sprintId: 0 };

let app;
let floorCalls = 0;
let jitStats = null;

/** The RankIndexService instance, or { reason } while it is not built or not registered. */
function rankIndex() {
  let exported;
  try {
    exported = require(RANK_INDEX_MODULE).RankIndexService;
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND' && String(error.message).includes('rank-index.service'))
      return {
        reason:
          'not available (dist/src/leaderboards/rank-index/rank-index.service.js is not built)',
      };
    throw error;
  }
  if (!exported) return { reason: 'not available (the module exports no RankIndexService)' };
  try {
    return { service: app.get(exported, { strict: false }) };
  } catch (error) {
    return { reason: `not available (${error.message})` };
  }
}

/** heapUsed + arrayBuffers after two full GCs (when --expose-gc), and rss. */
function memory() {
  global.gc?.();
  global.gc?.();
  const m = process.memoryUsage();
  return {
    js: m.heapUsed + m.arrayBuffers,
    rss: m.rss,
    heapUsed: m.heapUsed,
    arrayBuffers: m.arrayBuffers,
  };
}

/**
 * The board of bench/depth.js, written in SQL (a sequence, no round trips): entry k has the address
 * 0x<k as 40 hex digits>, 1 + (k * 7919 mod 5000) points (many ties) and reached_at on whole minutes,
 * plus a profile row per address (username and avatar), so pages load real profiles. Statements
 * that every database reads go through the service's dialect (house SQL: on PostgreSQL, `?` is
 * rendered as `$n`).
 */
async function fillBoard(dataSource, entries) {
  const type = dataSource.options.type;
  const sqlite = type === 'better-sqlite3';
  const postgres = type === 'postgres';
  // PostgreSQL: on one connection without the app's statement_timeout (VACUUM of a large board).
  await untimed(dataSource, (ds) => fill(ds, entries, sqlite, postgres));
}

async function fill(ds, entries, sqlite, postgres) {
  await query(ds, `INSERT INTO spaces (id, name) VALUES (1, 'Bench')`);
  const chunk = 100_000;
  for (let from = 0; from < entries; from += chunk) {
    const to = Math.min(entries, from + chunk) - 1;
    if (sqlite) {
      const seq = `WITH RECURSIVE seq(k) AS (SELECT ${from} UNION ALL SELECT k + 1 FROM seq WHERE k < ${to})`;
      await ds.query(
        `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at) ${seq}
         SELECT 1, 0, printf('0x%040x', k), 1 + ((k * 7919) % 5000), 1700000000000 + (k % 100000) * 60000 FROM seq`,
      );
      await ds.query(
        `INSERT INTO profiles (address_key, address, username, avatar) ${seq}
         SELECT printf('0x%040x', k), printf('0x%040X', k), 'user' || k, 'https://cdn.example.com/avatars/' || k || '.png' FROM seq`,
      );
    } else if (postgres) {
      // generate_series of BIGINT: k * 7919 leaves INTEGER's range past 271,000 entries.
      const seq = `generate_series(CAST(${from} AS BIGINT), ${to}) AS seq(k)`;
      await query(
        ds,
        `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
         SELECT 1, 0, '0x' || LPAD(TO_HEX(k), 40, '0'), 1 + ((k * 7919) % 5000),
           1700000000000 + (k % 100000) * 60000 FROM ${seq}`,
      );
      await query(
        ds,
        `INSERT INTO profiles (address_key, address, username, avatar)
         SELECT '0x' || LPAD(TO_HEX(k), 40, '0'), '0x' || UPPER(LPAD(TO_HEX(k), 40, '0')),
           'user' || k, 'https://cdn.example.com/avatars/' || k || '.png' FROM ${seq}`,
      );
    } else {
      // MariaDB's SEQUENCE engine: seq_<from>_to_<to> is a virtual table of those integers.
      const seq = `seq_${from}_to_${to}`;
      await ds.query(
        `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
         SELECT 1, 0, CONCAT('0x', LPAD(LOWER(HEX(seq)), 40, '0')), 1 + ((seq * 7919) % 5000),
           1700000000000 + (seq % 100000) * 60000 FROM ${seq}`,
      );
      await ds.query(
        `INSERT INTO profiles (address_key, address, username, avatar)
         SELECT CONCAT('0x', LPAD(LOWER(HEX(seq)), 40, '0')), CONCAT('0x', LPAD(HEX(seq), 40, '0')),
           CONCAT('user', seq), CONCAT('https://cdn.example.com/avatars/', seq, '.png') FROM ${seq}`,
      );
    }
  }
  await query(ds, 'INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (1, 0, ?)', [
    entries,
  ]);
  // PostgreSQL: VACUUM too, for the visibility map: index-only scans then skip the heap, as on a
  // database that autovacuum has been through.
  await query(
    ds,
    sqlite
      ? 'ANALYZE'
      : postgres
        ? 'VACUUM ANALYZE board_entries, profiles'
        : 'ANALYZE TABLE board_entries, profiles',
  );
}

const handlers = {
  /**
   * Creates the app with loadConfig(env) and listens on a loopback port. With `jit`, Apollo's
   * execution is replaced by graphql-jit's (the stretch experiment, bench/pages/jit-plugin.js).
   */
  async start({ env, jit = false }) {
    const started = performance.now();
    const apolloPlugins = [];
    if (jit) {
      const { compiledExecution } = require('./jit-plugin');
      const compiled = compiledExecution();
      apolloPlugins.push(compiled.plugin);
      jitStats = compiled.stats;
    }
    const nodeEnv = process.env.NODE_ENV ? { NODE_ENV: process.env.NODE_ENV } : {};
    app = await createApp(loadConfig({ PORT: '0', HOST: '127.0.0.1', ...nodeEnv, ...env }), {
      logger: ['error', 'warn'],
      apolloPlugins,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const index = rankIndex();
    const maxEntries = index.service?.stats?.().maxEntries;
    return {
      port: app.getHttpServer().address().port,
      startMs: performance.now() - started,
      rankIndex: !index.service
        ? index.reason
        : maxEntries === undefined
          ? 'available'
          : `available, maxEntries ${maxEntries}`,
    };
  },

  /** Writes the board (straight into the database) and creates two tokens. */
  async fill({ entries }) {
    const started = performance.now();
    await fillBoard(app.get(getDataSourceToken()), entries);
    const fillMs = performance.now() - started;
    const tokens = app.get(AccessTokensService);
    return {
      fillMs,
      queryToken: (await tokens.create('bench-pages')).token,
      ingestToken: (await tokens.create('bench-pages-ingest', ['query', 'ingest'])).token,
    };
  },

  /** warm() of the board, timed; { available: false, reason } without a RankIndexService. */
  async warm() {
    const index = rankIndex();
    if (!index.service) return { available: false, reason: index.reason };
    const started = performance.now();
    await index.service.warm(BOARD);
    return { available: true, ms: performance.now() - started };
  },

  /**
   * Part 4: on a fresh instance (nothing has read the board yet), the time of warm() and the
   * memory it keeps: stats() bytes, and the heapUsed + arrayBuffers delta after GC. Also the
   * longest event-loop stall while it ran (a build that blocks the loop stalls every request).
   */
  async coldStart() {
    const index = rankIndex();
    if (!index.service) return { available: false, reason: index.reason };
    const boardOf = (stats) =>
      stats?.boards?.find((b) => b.spaceId === BOARD.spaceId && b.sprintId === BOARD.sprintId) ??
      null;
    const beforeStats = boardOf(index.service.stats());
    const before = memory();
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const started = performance.now();
    await index.service.warm(BOARD);
    const ms = performance.now() - started;
    stalls.disable();
    const after = memory();
    const board = boardOf(index.service.stats());
    return {
      available: true,
      ms,
      gcExposed: typeof global.gc === 'function',
      // Set when the board was already indexed before warm() (built at start): the time and the
      // memory delta then miss the build.
      indexedBeforeWarm: beforeStats,
      stats: board,
      statsBytesPerEntry: board && board.entries > 0 ? board.bytes / board.entries : null,
      jsDelta: after.js - before.js,
      rssDelta: after.rss - before.rss,
      heapUsedDelta: after.heapUsed - before.heapUsed,
      arrayBuffersDelta: after.arrayBuffers - before.arrayBuffers,
      maxEventLoopStallMs: stalls.max / 1e6,
    };
  },

  /**
   * Part 2: the board reader and profile loading answer a fixed page captured from one real answer
   * (the first page), with no database work for the page; the rest of the stack is untouched.
   */
  async floor() {
    const reader = app.get(BoardReader, { strict: false });
    const profiles = app.get(ProfilesService, { strict: false });
    const page = await reader.readPage(BOARD, { kind: 'first', size: 50 });
    const addresses = await profiles.loadAddresses(page.entries.map((e) => e.addressKey));
    const byKey = new Map(page.entries.map((e, i) => [e.addressKey, addresses[i]]));
    reader.readPage = async () => {
      floorCalls++;
      return page;
    };
    reader.findEntry = async (_board, key) =>
      page.entries.find((e) => e.addressKey === key) ?? null;
    reader.countEntries = async () => page.totalCount;
    profiles.loadAddresses = async (keys) => keys.map((key) => byKey.get(key) ?? addresses[0]);
    return { entries: page.entries.length, totalCount: page.totalCount };
  },

  /** RankIndexService.stats(), or null without one. */
  async stats() {
    return rankIndex().service?.stats() ?? null;
  },

  /** How often the fixed readPage answered: 0 means the patch missed the read path. */
  async floorCalls() {
    return floorCalls;
  },

  /** The compiled-execution plugin's counts (null without it). */
  async jitStats() {
    return jitStats;
  },

  async close() {
    await app?.close();
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers);
