// One board of `entries` entries for space 1 (all-time), written straight into the service's
// tables: many ties (5,000 distinct point values, times on whole minutes), addresses in order.
// With `profiles`, each address also gets a profile row, one in ten with a name.
// Statements are house SQL run through the service's dialect (dist/src/storage/statements), so
// they run on SQLite, MariaDB and PostgreSQL alike.
/* eslint-disable */
const { query } = require('../dist/src/storage/statements');

/** Entries a multi-row INSERT writes (10,000 parameters, under every database's limit). */
const ROWS_PER_INSERT = 2000;

/** Fills the board through the app's data source; answers the milliseconds it took. */
async function fillBoard(ds, { entries, kind, profiles = false }) {
  const started = Date.now();
  await untimed(ds, async (on) => {
    await query(on, 'INSERT INTO spaces (id, name) VALUES (1, ?)', ['Bench']);
    if (kind === 'postgres') await fillInServer(on, entries, profiles);
    else await fillInRows(on, entries, profiles);
    await query(on, 'INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (1, 0, ?)', [
      entries,
    ]);
    await analyze(on, kind, profiles ? ['board_entries', 'profiles'] : ['board_entries']);
    // The board's rank buckets, as a sprint's rebuild makes them: written straight into the
    // tables, the board has none, and the SQL reads would count from the top.
    const bucketsStarted = Date.now();
    const buckets = await buildBuckets(ds, on, { spaceId: 1, sprintId: 0 });
    bucketSeconds = (Date.now() - bucketsStarted) / 1000;
    bucketCount = buckets;
    await analyze(on, kind, ['board_rank_buckets']);
  });
  return Date.now() - started;
}

/**
 * Runs `work` where the fill's statements run: on PostgreSQL one connection whose session has no
 * statement_timeout (the app sets REQUEST_TIMEOUT_MS on every pooled connection, and one
 * INSERT ... SELECT of 10,000,000 entries, or their VACUUM, takes minutes), its limit put back
 * afterwards; the data source elsewhere (the loop's statements are short).
 */
async function untimed(ds, work) {
  if (ds.options.type !== 'postgres') return work(ds);
  const runner = ds.createQueryRunner();
  try {
    // Put back as it was, not RESET: connections opened before the app set the limit got it by
    // SET, and RESET would leave them with none.
    const [{ previous }] = await query(
      runner,
      "SELECT current_setting('statement_timeout') AS previous",
    );
    await query(runner, "SELECT set_config('statement_timeout', '0', FALSE)");
    try {
      return await work(runner);
    } finally {
      await query(runner, "SELECT set_config('statement_timeout', ?, FALSE)", [previous]);
    }
  } finally {
    await runner.release();
  }
}

/** The entries (and profiles) from this process, ROWS_PER_INSERT a statement. */
async function fillInRows(ds, entries, profiles) {
  for (let start = 0; start < entries; start += ROWS_PER_INSERT) {
    const n = Math.min(ROWS_PER_INSERT, entries - start);
    const rows = [];
    const people = [];
    for (let i = 0; i < n; i++) {
      const k = start + i;
      const key = `0x${k.toString(16).padStart(40, '0')}`;
      rows.push(1, 0, key, 1 + ((k * 7919) % 5000), 1_700_000_000_000 + (k % 100_000) * 60_000);
      people.push(key, key.toUpperCase().replace('0X', '0x'), k % 10 === 0 ? `user ${k}` : null);
    }
    await query(
      ds,
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at) VALUES ${new Array(n).fill('(?, ?, ?, ?, ?)').join(', ')}`,
      rows,
    );
    if (profiles)
      await query(
        ds,
        `INSERT INTO profiles (address_key, address, username) VALUES ${new Array(n).fill('(?, ?, ?)').join(', ')}`,
        people,
      );
  }
}

/**
 * PostgreSQL: the same rows as fillInRows, made by the server from generate_series in one
 * statement per table: half the loop's time at 200,000 entries (its parameters built here and
 * parsed there), for 10,000,000 entries. k is a BIGINT: k * 7919 leaves INTEGER's range past
 * 271,000 entries.
 */
async function fillInServer(ds, entries, profiles) {
  const series = `generate_series(CAST(0 AS BIGINT), CAST(? AS BIGINT)) AS s(k)`;
  const key = `'0x' || LPAD(TO_HEX(k), 40, '0')`;
  await query(
    ds,
    `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
     SELECT 1, 0, ${key}, 1 + ((k * 7919) % 5000), 1700000000000 + (k % 100000) * 60000
     FROM ${series}`,
    [entries - 1],
  );
  if (profiles)
    await query(
      ds,
      `INSERT INTO profiles (address_key, address, username)
       SELECT ${key}, '0x' || UPPER(LPAD(TO_HEX(k), 40, '0')),
         CASE WHEN k % 10 = 0 THEN 'user ' || k END
       FROM ${series}`,
      [entries - 1],
    );
}

/**
 * Fresh statistics for the planner. PostgreSQL: VACUUM too, which sets the visibility map, so
 * index-only scans skip the heap as they would on a long-running database (autovacuum).
 */
async function analyze(ds, kind, tables) {
  const sql =
    kind === 'sqlite'
      ? 'ANALYZE'
      : kind === 'postgres'
        ? `VACUUM ANALYZE ${tables.join(', ')}`
        : `ANALYZE TABLE ${tables.join(', ')}`;
  await query(ds, sql);
}

let bucketSeconds = 0;
let bucketCount = 0;

/** Makes the board's rank buckets from its entries (statements `on`); answers how many it made. */
async function buildBuckets(ds, on, board) {
  const { resolveDialect } = require('../dist/src/storage/engines');
  const { RankBucketSql } = require('../dist/src/leaderboards/rank-buckets/rank-bucket-sql');
  const {
    rebuildBuckets,
    runAsync,
  } = require('../dist/src/leaderboards/rank-buckets/rank-buckets');
  const sql = new RankBucketSql(await resolveDialect(ds));
  return runAsync(rebuildBuckets(sql, board), (text, params) => query(on, text, params));
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

module.exports = { arg, fillBoard, bucketStats, untimed };
