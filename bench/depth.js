#!/usr/bin/env node
// Latency of leaderboard pages by depth, full stack (token check, GraphQL, profiles), on a board
// written straight into the database. Usage (after npm run build):
//   node bench/depth.js [--entries 1000000] [--db sqlite|mariadb] [--requests 30]
// MariaDB: MARIADB_URL (default mysql://root@127.0.0.1:3306) gets a scratch database.
/* eslint-disable */
const { createApp } = require('../dist/src/host/app.factory');
const { loadConfig } = require('../dist/src/host/config/app-config');
const { AccessTokensService } = require('../dist/src/auth/access-tokens.service');
const { getDataSourceToken } = require('@nestjs/typeorm');
const { scratchDatabase } = require('./scratch-database');
const { arg, fillBoard } = require('./board-fill');

const ENTRIES = Number(arg('entries', 1_000_000));
const DB = arg('db', 'sqlite');
const REQUESTS = Number(arg('requests', 30));

const QUERY = `query($after: String, $skip: String) { space(id: 1) { loyaltyPointsRanks(cursorAfter: $after, after: $skip) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { address username avatar } } } } }`;

async function main() {
  const db = await scratchDatabase(DB, 'loyalty_bench');
  // The rate limits raised out of the way (still enforced): sequential requests exceed the default.
  const env = { RATE_LIMIT_TOKEN: '1000000/1s', RATE_LIMIT_ADDRESS: '1000000/1s' };
  const app = await createApp(loadConfig({ DATABASE_URL: db.url, PORT: '0', ...env }), {
    logger: false,
  });
  try {
    await measure(app);
  } finally {
    await app.close();
    await db.drop();
  }
}

async function measure(app) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${app.getHttpServer().address().port}/query`;
  const { token } = await app.get(AccessTokensService).create('bench');
  const fillMs = await fillBoard(app.get(getDataSourceToken()), { entries: ENTRIES, kind: DB });
  const post = async (variables) => {
    const t0 = process.hrtime.bigint();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify({ query: QUERY, variables }),
    });
    const body = await response.json();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return { ms, page: body.data.space.loyaltyPointsRanks };
  };
  // Cursors at each depth: take them from an offset page (deprecated `after`), then time cursor pages.
  const depths = [
    ...new Set([0, 1_000, 100_000, Math.floor(ENTRIES / 2), ENTRIES - 10_000]),
  ].filter((d) => d < ENTRIES);
  const results = [];
  for (const depth of depths) {
    const cursor =
      depth === 0 ? null : (await post({ skip: String(depth - 1) })).page.pageInfo.endCursor;
    const cursorTimes = [];
    const offsetTimes = [];
    for (let i = 0; i < REQUESTS; i++) cursorTimes.push((await post({ after: cursor })).ms);
    for (let i = 0; i < Math.min(REQUESTS, 10); i++)
      offsetTimes.push((await post({ skip: depth === 0 ? null : String(depth + 49) })).ms);
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    results.push({
      depth,
      cursorMedianMs: +median(cursorTimes).toFixed(2),
      offsetMedianMs: +median(offsetTimes).toFixed(2),
    });
  }
  console.log(
    JSON.stringify(
      { db: DB, entries: ENTRIES, fillSeconds: +(fillMs / 1000).toFixed(1), results },
      null,
      2,
    ),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
