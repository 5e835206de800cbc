#!/usr/bin/env node
// Latency of leaderboard pages by depth, full stack (token check, GraphQL, profiles), on a board
// written straight into the database. Usage (after npm run build):
//   node bench/depth.js [--entries 1000000] [--db sqlite|mariadb|postgres] [--requests 30]
//                       [--index default|off|on] [--depths 0,1000,...] [--then-index-on 1]
// --index off: RANK_INDEX_MAX_ENTRIES below the board's size, pages from SQL (rank buckets);
// --index on: the budget above it, and the board's index warmed first, with its load time and the
// process's memory growth (run with node --expose-gc for steadier heap figures); --then-index-on:
// after the pages, the same figures from a second instance over the same board.
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306), PostgreSQL: POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) gets a scratch database (see bench/board-fill.js).
/* eslint-disable */
const { createApp } = require('../dist/src/host/app.factory');
const { loadConfig } = require('../dist/src/host/config/app-config');
const { AccessTokensService } = require('../dist/src/auth/access-tokens.service');
const { getDataSourceToken } = require('@nestjs/typeorm');
const { DATABASES, scratchDatabase } = require('./scratch-database');
const { arg, fillBoard, bucketStats } = require('./board-fill');
const { RankIndexService } = require('../dist/src/leaderboards/rank-index/rank-index.service');

const ENTRIES = Number(arg('entries', 1_000_000));
const DB = arg('db', 'sqlite');
const REQUESTS = Number(arg('requests', 30));
const INDEX = arg('index', 'default');
const DEPTHS = arg('depths', null);
if (!DATABASES.includes(DB)) {
  console.error(`--db: one of ${DATABASES.join(', ')}`);
  process.exit(2);
}

const QUERY = `query($after: String, $skip: String) { space(id: 1) { loyaltyPointsRanks(cursorAfter: $after, after: $skip) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { address username avatar } } } } }`;

async function main() {
  const db = await scratchDatabase(DB, 'loyalty_bench');
  // The rate limits raised out of the way (still enforced): sequential requests exceed the default.
  const env = { RATE_LIMIT_TOKEN: '1000000/1s', RATE_LIMIT_ADDRESS: '1000000/1s' };
  if (INDEX === 'off') env.RANK_INDEX_MAX_ENTRIES = String(Math.max(0, Math.floor(ENTRIES / 10)));
  if (INDEX === 'on') env.RANK_INDEX_MAX_ENTRIES = String(ENTRIES * 2);
  const app = await createApp(loadConfig({ DATABASE_URL: db.url, PORT: '0', ...env }), {
    logger: false,
  });
  try {
    await measure(app);
    await app.close();
    // --then-index-on: the same board, served by a second instance whose budget holds it.
    if (arg('then-index-on', null) !== null) {
      const indexed = await createApp(
        loadConfig({
          DATABASE_URL: db.url,
          PORT: '0',
          ...env,
          RANK_INDEX_MAX_ENTRIES: String(ENTRIES * 2),
          // The load reads the board in one statement, which the statement limit would cut.
          REQUEST_TIMEOUT_MS: '300000',
        }),
        { logger: false },
      );
      try {
        console.log(
          JSON.stringify(
            { db: DB, entries: ENTRIES, rankIndex: await warmIndex(indexed) },
            null,
            2,
          ),
        );
      } finally {
        await indexed.close();
      }
    }
  } finally {
    await app.close().catch(() => undefined);
    await db.drop();
  }
}

async function measure(app) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${app.getHttpServer().address().port}/query`;
  const { token } = await app.get(AccessTokensService).create('bench');
  const fillMs = await fillBoard(app.get(getDataSourceToken()), { entries: ENTRIES, kind: DB });
  const index = INDEX === 'on' ? await warmIndex(app) : undefined;
  // A distinct body per request (a numbered comment): the response cache answers repeats.
  let sent = 0;
  const post = async (variables) => {
    const t0 = process.hrtime.bigint();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify({ query: `# ${sent++}\n${QUERY}`, variables }),
    });
    const body = await response.json();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return { ms, page: body.data.space.loyaltyPointsRanks };
  };
  // Cursors at each depth: take them from an offset page (deprecated `after`), then time cursor pages.
  const depths = DEPTHS
    ? DEPTHS.split(',').map(Number)
    : [
        ...new Set([
          0,
          1_000,
          100_000,
          Math.floor(ENTRIES / 2),
          ENTRIES - ENTRIES / 100,
          ENTRIES - 10_000,
        ]),
      ].filter((d) => d < ENTRIES);
  const stats = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    return { medianMs: +at(0.5).toFixed(2), p99Ms: +at(0.99).toFixed(2) };
  };
  const results = [];
  for (const depth of depths) {
    const cursor =
      depth === 0 ? null : (await post({ skip: String(depth - 1) })).page.pageInfo.endCursor;
    const cursorTimes = [];
    const offsetTimes = [];
    // Interleaved, so that drift of the machine hits both alike.
    for (let i = 0; i < REQUESTS; i++) {
      cursorTimes.push((await post({ after: cursor })).ms);
      offsetTimes.push((await post({ skip: depth === 0 ? null : String(depth - 1) })).ms);
    }
    results.push({ depth, cursor: stats(cursorTimes), offset: stats(offsetTimes) });
  }
  // One address's rank near the bottom (the fill's addresses are in key order, not rank order).
  const bottom = (await post({ skip: String(ENTRIES - 1000) })).page;
  const rankTimes = [];
  const rankQuery = (address) =>
    `query { space(id: 1) { addressLoyaltyPoints(address: "${address}") { rank points } } }`;
  for (let i = 0; i < REQUESTS; i++) {
    const address = bottom.list[i % bottom.list.length].address.address;
    const t0 = process.hrtime.bigint();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify({ query: `# ${sent++}\n${rankQuery(address)}` }),
    });
    const body = await response.json();
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    rankTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(
    JSON.stringify(
      {
        db: DB,
        entries: ENTRIES,
        index: INDEX,
        fillSeconds: +(fillMs / 1000).toFixed(1),
        ...bucketStats(),
        rankIndex: index,
        results,
        addressRankNearBottom: stats(rankTimes),
      },
      null,
      2,
    ),
  );
}

/** Loads the board's rank index, answering its load time and the process's memory growth. */
async function warmIndex(app) {
  const memory = () => {
    global.gc?.();
    const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
    return { rss, heapUsed, arrayBuffers };
  };
  const before = memory();
  const t0 = Date.now();
  await app.get(RankIndexService).warm({ spaceId: 1, sprintId: 0 });
  const loadSeconds = (Date.now() - t0) / 1000;
  const after = memory();
  const mb = (bytes) => +(bytes / 1048576).toFixed(0);
  return {
    loadSeconds: +loadSeconds.toFixed(2),
    rssGrowthMB: mb(after.rss - before.rss),
    heapGrowthMB: mb(after.heapUsed - before.heapUsed),
    arrayBuffersGrowthMB: mb(after.arrayBuffers - before.arrayBuffers),
    bytesPerEntry: +((after.rss - before.rss) / ENTRIES).toFixed(1),
    stats: app.get(RankIndexService).stats(),
  };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
