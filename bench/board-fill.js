// One board of `entries` entries for space 1 (all-time), written straight into the service's
// tables: many ties (5,000 distinct point values, times on whole minutes), addresses in order.
// With `profiles`, each address also gets a profile row, one in ten with a name.
/* eslint-disable */

/** Fills the board through the app's data source; answers the milliseconds it took. */
async function fillBoard(ds, { entries, kind, profiles = false }) {
  const started = Date.now();
  await ds.query('INSERT INTO spaces (id, name) VALUES (1, ?)', ['Bench']);
  for (let start = 0; start < entries; start += 2000) {
    const n = Math.min(2000, entries - start);
    const rows = [];
    const people = [];
    for (let i = 0; i < n; i++) {
      const k = start + i;
      const key = `0x${k.toString(16).padStart(40, '0')}`;
      rows.push(1, 0, key, 1 + ((k * 7919) % 5000), 1_700_000_000_000 + (k % 100_000) * 60_000);
      people.push(key, key.toUpperCase().replace('0X', '0x'), k % 10 === 0 ? `user ${k}` : null);
    }
    await ds.query(
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at) VALUES ${new Array(n).fill('(?, ?, ?, ?, ?)').join(', ')}`,
      rows,
    );
    if (profiles)
      await ds.query(
        `INSERT INTO profiles (address_key, address, username) VALUES ${new Array(n).fill('(?, ?, ?)').join(', ')}`,
        people,
      );
  }
  await ds.query('INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (1, 0, ?)', [
    entries,
  ]);
  const tables = profiles ? 'board_entries, profiles' : 'board_entries';
  await ds.query(kind === 'sqlite' ? 'ANALYZE' : `ANALYZE TABLE ${tables}`);
  // The board's rank buckets, as a sprint's rebuild makes them: written straight into the
  // tables, the board has none, and the SQL reads would count from the top.
  const bucketsStarted = Date.now();
  const buckets = await buildBuckets(ds, { spaceId: 1, sprintId: 0 });
  bucketSeconds = (Date.now() - bucketsStarted) / 1000;
  bucketCount = buckets;
  await ds.query(kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE TABLE board_rank_buckets');
  return Date.now() - started;
}

let bucketSeconds = 0;
let bucketCount = 0;

/** Makes the board's rank buckets from its entries; answers how many it made. */
async function buildBuckets(ds, board) {
  const { resolveDialect } = require('../dist/src/storage/dialect/sql-dialect');
  const { RankBucketSql } = require('../dist/src/leaderboards/rank-buckets/rank-bucket-sql');
  const {
    rebuildBuckets,
    runAsync,
  } = require('../dist/src/leaderboards/rank-buckets/rank-buckets');
  const sql = new RankBucketSql(await resolveDialect(ds));
  return runAsync(rebuildBuckets(sql, board), (text, params) => ds.query(text, params));
}

/** How long the last fill took to make the board's buckets, and how many. */
function bucketStats() {
  return { bucketSeconds: +bucketSeconds.toFixed(1), buckets: bucketCount };
}

/** `--name value` from the command line, or `fallback`. */
function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

module.exports = { arg, fillBoard, bucketStats };
