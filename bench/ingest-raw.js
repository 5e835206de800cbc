#!/usr/bin/env node
// The raw driver baseline of bench/ingest.js: a plain script that applies an NDJSON file of the
// bench's records (bench/ingest-file.js) with the database's driver alone (better-sqlite3,
// mysql2, pg), into a database whose schema the service's migrations made:
//   DATABASE_URL=sqlite:...|mysql://...|postgres://... node bench/ingest-raw.js FILE [--batch-size 200000]
// It writes the rows the service writes for those records (PointsLedgerService.addEvents), in
// batches of --batch-size records, one transaction per batch: each event in points_events (in key
// order); per batch, each (board, address) once in board_entries (all-time and the sprint whose
// window holds the event; points added, reached_at kept at the greatest, prior_reached_at as the
// service keeps it on servers); a board_changes row per entry written, or one reset row when the
// service would announce the batch as a board reset (announceAsReset); the boards' counters; a
// profile row per new address. Spaces and sprints as the service writes them for new ones.
// What it does not do, so that it is the driver's ceiling for this schema: the rank buckets
// (board_rank_buckets and the boards row's lock; skipped), and every read (it is the only writer
// and keeps the totals itself: no check for keys already applied, no rows read back); one
// transaction per batch where the service's import runs two at once on a server.
// Prints one JSON line on stdout: what it wrote.
/* eslint-disable */
const { createReadStream } = require('node:fs');
const readline = require('node:readline');

const argv = process.argv.slice(2);
const FILE = argv[0];
const at = argv.indexOf('--batch-size');
const BATCH = at === -1 ? 200_000 : Number(argv[at + 1]);
const URL_TEXT = process.env.DATABASE_URL;
if (!FILE || !URL_TEXT || !(BATCH > 0)) {
  console.error('usage: DATABASE_URL=... node bench/ingest-raw.js FILE [--batch-size N]');
  process.exit(2);
}

/** As the service: multi-row statements on a server (insertInBatches), one row each on SQLite. */
const SERVER_ROWS = 500;
/** SQLite's rows per INSERT into board_changes, an AUTOINCREMENT table (board-change-log.ts). */
const SQLITE_CHANGE_ROWS = 64;
/** announceAsReset (board-change-log.ts): a batch that rewrites much of a board is one reset. */
const RESET_MIN_CHANGES = 1000;
const announceAsReset = (changes, entries) => changes > RESET_MIN_CHANGES && changes * 5 > entries;
const ALL_TIME = 0;

const ENTRY_COLUMNS = ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at'];
const CHANGE_COLUMNS = [
  'space_id',
  'sprint_id',
  'address_key',
  'points',
  'reached_at',
  'created_at',
];
const EVENT_COLUMNS = ['event_key', 'space_id', 'address_key', 'points', 'occurred_at', 'reason'];

// ---------------------------------------------------------------------------------------------
// The three drivers: begin, commit, and statements of `rows` rows (placeholders as each takes them)

function rowsSql(head, columns, rows, placeholder) {
  let n = 0;
  const row = () => `(${columns.map(() => placeholder(++n)).join(', ')})`;
  return `${head} (${columns.join(', ')}) VALUES ${Array.from({ length: rows }, row).join(', ')}`;
}

/** better-sqlite3, with the pragmas the service's connection sets (sqlite-connection.ts). */
function sqliteDriver(path) {
  const Database = require('better-sqlite3');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -65536');
  db.pragma('temp_store = MEMORY');
  const prepared = new Map();
  const prepare = (sql) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  return {
    rowsPer: (table) => (table === 'board_changes' ? SQLITE_CHANGE_ROWS : 1),
    begin: () => db.exec('BEGIN IMMEDIATE'),
    commit: () => db.exec('COMMIT'),
    run: (sql, values) => prepare(sql).run(...values),
    insert: (table, columns, rows) => rowsSql(`INSERT INTO ${table}`, columns, rows, () => '?'),
    insertIgnore: (table, columns, rows) =>
      rowsSql(`INSERT OR IGNORE INTO ${table}`, columns, rows, () => '?'),
    // SQLite's board_entries keeps prior_reached_at at 0 (its backlog knows the old keys).
    upsertEntries: (rows) =>
      `${rowsSql('INSERT INTO board_entries', ENTRY_COLUMNS, rows, () => '?')}
       ON CONFLICT (space_id, sprint_id, address_key) DO UPDATE SET
       points = board_entries.points + excluded.points,
       reached_at = MAX(board_entries.reached_at, excluded.reached_at)`,
    upsertCounter: () =>
      `INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (?, ?, ?)
       ON CONFLICT (space_id, sprint_id) DO UPDATE SET entry_count = boards.entry_count + excluded.entry_count`,
    close: () => db.close(),
  };
}

/** mysql2, text protocol with client-side placeholders (as TypeORM's mysql driver runs them). */
async function mariadbDriver(url) {
  const mysql = require('mysql2/promise');
  const u = new URL(url);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username) || 'root',
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)),
    charset: 'utf8mb4',
  });
  // The service's writers run in REPEATABLE READ (MySQL's default, set there explicitly).
  await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  const q = () => '?';
  return {
    rowsPer: () => SERVER_ROWS,
    begin: () => conn.query('START TRANSACTION'),
    commit: () => conn.query('COMMIT'),
    run: (sql, values) => conn.query(sql, values),
    insert: (table, columns, rows) => rowsSql(`INSERT INTO ${table}`, columns, rows, q),
    insertIgnore: (table, columns, rows) =>
      rowsSql(`INSERT IGNORE INTO ${table}`, columns, rows, q),
    // The prior reached_at first: MySQL assigns left to right (see conflictAssignments).
    upsertEntries: (rows) =>
      `${rowsSql('INSERT INTO board_entries', ENTRY_COLUMNS, rows, q)}
       ON DUPLICATE KEY UPDATE prior_reached_at = reached_at, points = points + VALUES(points),
       reached_at = GREATEST(reached_at, VALUES(reached_at))`,
    upsertCounter: () =>
      `INSERT INTO boards (space_id, sprint_id, entry_count) VALUES (?, ?, ?)
       ON DUPLICATE KEY UPDATE entry_count = entry_count + VALUES(entry_count)`,
    close: () => conn.end(),
  };
}

/** node-postgres, one client; READ COMMITTED, the service's writers' isolation there. */
async function postgresDriver(url) {
  const { Client } = require('pg');
  const u = new URL(url);
  const client = new Client({
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username) || 'postgres',
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)),
  });
  await client.connect();
  const numbered = (n) => `$${n}`;
  return {
    rowsPer: () => SERVER_ROWS,
    begin: () => client.query('BEGIN ISOLATION LEVEL READ COMMITTED'),
    commit: () => client.query('COMMIT'),
    run: (sql, values) => client.query(sql, values),
    insert: (table, columns, rows) => rowsSql(`INSERT INTO ${table}`, columns, rows, numbered),
    insertIgnore: (table, columns, rows) =>
      `${rowsSql(`INSERT INTO ${table}`, columns, rows, numbered)} ON CONFLICT DO NOTHING`,
    upsertEntries: (rows) =>
      `${rowsSql('INSERT INTO board_entries', ENTRY_COLUMNS, rows, numbered)}
       ON CONFLICT (space_id, sprint_id, address_key) DO UPDATE SET
       prior_reached_at = board_entries.reached_at,
       points = board_entries.points + EXCLUDED.points,
       reached_at = GREATEST(board_entries.reached_at, EXCLUDED.reached_at)`,
    upsertCounter: () =>
      `INSERT INTO boards (space_id, sprint_id, entry_count) VALUES ($1, $2, $3)
       ON CONFLICT (space_id, sprint_id) DO UPDATE SET entry_count = boards.entry_count + EXCLUDED.entry_count`,
    close: () => client.end(),
  };
}

function driverOf(url) {
  if (url.startsWith('sqlite:')) return sqliteDriver(url.slice('sqlite:'.length));
  if (/^(mysql|mariadb):/.test(url)) return mariadbDriver(url);
  if (/^postgres(ql)?:/.test(url)) return postgresDriver(url);
  throw new Error(`DATABASE_URL: no driver for ${url}`);
}

// ---------------------------------------------------------------------------------------------
// What a batch writes

/**
 * Rows of one table in statements of the driver's size (the last one smaller), each statement's
 * text made once. better-sqlite3 answers at once: nothing to await (a microtask a row otherwise).
 */
async function writeRows(db, statementOf, table, rows, perRow) {
  const size = db.rowsPer(table);
  const full = rows.length >= size ? statementOf(size) : null;
  let at = 0;
  for (; at + size <= rows.length; at += size) {
    const values = [];
    for (let i = at; i < at + size; i++) for (const value of perRow(rows[i])) values.push(value);
    const pending = db.run(full, values);
    if (pending instanceof Promise) await pending;
  }
  if (at < rows.length) {
    const rest = rows.slice(at);
    await db.run(statementOf(rest.length), rest.flatMap(perRow));
  }
}

const written = {
  events: 0,
  entryUpserts: 0,
  entryChanges: 0,
  boardResets: 0,
  profiles: 0,
  counterUpdates: 0,
  transactions: 0,
};
/** What this process wrote, kept as the only writer: entries' totals, boards' counts, profiles. */
const totals = new Map();
const counts = new Map();
const profiles = new Set();
const sprints = [];

const entryId = (spaceId, sprintId, addressKey) => `${spaceId}\u0000${sprintId}\u0000${addressKey}`;
const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

async function applySpace(db, record) {
  await db.run(db.insert('spaces', ['id', 'name'], 1), [record.id, record.name]);
}

/** A new sprint: its row, and what its board's rebuild writes on an empty ledger. */
async function applySprint(db, record, now) {
  const sprint = {
    id: record.id,
    spaceId: record.spaceId,
    start: Date.parse(record.startTime),
    end: Date.parse(record.endTime),
  };
  sprints.push(sprint);
  await db.run(db.insert('sprints', ['id', 'space_id', 'name', 'start_time', 'end_time'], 1), [
    sprint.id,
    sprint.spaceId,
    record.name,
    sprint.start,
    sprint.end,
  ]);
  await db.run(db.upsertCounter(), [sprint.spaceId, sprint.id, 0]);
  await db.run(db.insert('board_changes', CHANGE_COLUMNS, 1), [
    sprint.spaceId,
    sprint.id,
    null,
    0,
    0,
    now,
  ]);
  written.boardResets++;
}

/** Points records, in file order: PointsLedgerService.addEvents' rows. */
async function applyPoints(db, records, now) {
  const events = records.map((r) => ({
    key: r.key,
    spaceId: r.spaceId,
    addressKey: r.address.toLowerCase(),
    address: r.address,
    points: r.points,
    occurredAt: Date.parse(r.occurredAt),
    reason: r.reason ?? null,
  }));
  await writeRows(
    db,
    (n) => db.insert('points_events', EVENT_COLUMNS, n),
    'points_events',
    [...events].sort((a, b) => byText(a.key, b.key)),
    (e) => [e.key, e.spaceId, e.addressKey, e.points, e.occurredAt, e.reason],
  );
  written.events += events.length;
  // Each (board, address) once: the sum of its points and its latest time, boards in order and
  // addresses in code-unit order within each (the service's lock order).
  const boards = new Map();
  const spelling = new Map();
  for (const e of events) {
    if (!spelling.has(e.addressKey)) spelling.set(e.addressKey, e.address);
    const ids = [ALL_TIME];
    for (const s of sprints)
      if (s.spaceId === e.spaceId && s.start <= e.occurredAt && e.occurredAt < s.end)
        ids.push(s.id);
    for (const sprintId of ids) {
      const boardKey = `${e.spaceId}/${sprintId}`;
      let board = boards.get(boardKey);
      if (!board)
        boards.set(boardKey, (board = { spaceId: e.spaceId, sprintId, changes: new Map() }));
      const change = board.changes.get(e.addressKey);
      if (change) {
        change.delta += e.points;
        if (e.occurredAt > change.reachedAt) change.reachedAt = e.occurredAt;
      } else board.changes.set(e.addressKey, { delta: e.points, reachedAt: e.occurredAt });
    }
  }
  const ordered = [...boards.values()].sort(
    (a, b) => a.spaceId - b.spaceId || a.sprintId - b.sprintId,
  );
  const counters = [];
  for (const board of ordered) {
    const { spaceId, sprintId } = board;
    const changes = [...board.changes].sort(([a], [b]) => byText(a, b));
    const countKey = `${spaceId}/${sprintId}`;
    const asReset = announceAsReset(changes.length, counts.get(countKey) ?? 0);
    let countChange = 0;
    // As the service: each part of SERVER_ROWS entries upserted, then its change rows.
    for (let i = 0; i < changes.length; i += SERVER_ROWS) {
      const part = changes.slice(i, i + SERVER_ROWS);
      await writeRows(
        db,
        (n) => db.upsertEntries(n),
        'board_entries',
        part,
        ([addressKey, c]) => [spaceId, sprintId, addressKey, c.delta, c.reachedAt],
      );
      written.entryUpserts += part.length;
      const states = part.map(([addressKey, c]) => {
        const id = entryId(spaceId, sprintId, addressKey);
        const before = totals.get(id);
        const after = {
          points: (before?.points ?? 0) + c.delta,
          reachedAt: before ? Math.max(before.reachedAt, c.reachedAt) : c.reachedAt,
        };
        totals.set(id, after);
        countChange += (after.points > 0 ? 1 : 0) - ((before?.points ?? 0) > 0 ? 1 : 0);
        return [addressKey, after];
      });
      if (!asReset) {
        await writeRows(
          db,
          (n) => db.insert('board_changes', CHANGE_COLUMNS, n),
          'board_changes',
          states,
          ([addressKey, s]) => [spaceId, sprintId, addressKey, s.points, s.reachedAt, now],
        );
        written.entryChanges += states.length;
      }
    }
    counters.push({ spaceId, sprintId, countKey, countChange, asReset });
  }
  const fresh = [...spelling]
    .filter(([key]) => !profiles.has(key))
    .sort(([a], [b]) => byText(a, b));
  await writeRows(
    db,
    (n) => db.insertIgnore('profiles', ['address_key', 'address'], n),
    'profiles',
    fresh,
    ([key, address]) => [key, address],
  );
  for (const [key] of fresh) profiles.add(key);
  written.profiles += fresh.length;
  // The counters last, as the service writes them (its writers hold them only to the commit).
  for (const { spaceId, sprintId, countKey, countChange, asReset } of counters) {
    if (countChange !== 0) {
      await db.run(db.upsertCounter(), [spaceId, sprintId, countChange]);
      counts.set(countKey, (counts.get(countKey) ?? 0) + countChange);
      written.counterUpdates++;
    }
    if (asReset) {
      await db.run(db.insert('board_changes', CHANGE_COLUMNS, 1), [
        spaceId,
        sprintId,
        null,
        0,
        0,
        now,
      ]);
      written.boardResets++;
    }
  }
}

/** One batch of records, one transaction: consecutive points records applied together. */
async function applyBatch(db, records) {
  const now = Date.now();
  await db.begin();
  let points = [];
  const flush = async () => {
    if (points.length > 0) await applyPoints(db, points, now);
    points = [];
  };
  for (const record of records) {
    if (record.type === 'points') {
      points.push(record);
      continue;
    }
    await flush();
    if (record.type === 'space') await applySpace(db, record);
    else if (record.type === 'sprint') await applySprint(db, record, now);
    else throw new Error(`ingest-raw: no ${record.type} records (the bench writes none)`);
  }
  await flush();
  await db.commit();
  written.transactions++;
}

async function main() {
  const started = process.hrtime.bigint();
  const db = await driverOf(URL_TEXT);
  try {
    const lines = readline.createInterface({
      input: createReadStream(FILE),
      crlfDelay: Infinity,
    });
    let batch = [];
    for await (const line of lines) {
      if (line.trim() === '') continue;
      batch.push(JSON.parse(line));
      if (batch.length >= BATCH) {
        await applyBatch(db, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await applyBatch(db, batch);
  } finally {
    await db.close();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(JSON.stringify({ ...written, batchSize: BATCH, seconds }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
