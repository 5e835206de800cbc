import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  BoardKey as RankKey,
  BoardReadOptions,
  BoardStatements,
  PackedEntries,
} from '../engine/parallel-board-read';
import {
  PARALLEL_FROM,
  readSqliteBoardInWorkers as readBoardInWorker,
} from './parallel-board-read';

const COLUMNS = 'address_key AS addressKey, points, reached_at AS reachedAt';
const ORDER = 'ORDER BY points DESC, reached_at ASC, address_key ASC';
const STATEMENTS: BoardStatements = {
  whole: `SELECT ${COLUMNS} FROM entries WHERE points > 0 ${ORDER}`,
  before: `SELECT ${COLUMNS} FROM entries WHERE points > 0 AND points >= ?
    AND (points > ? OR reached_at < ? OR (reached_at = ? AND address_key < ?)) ${ORDER}`,
  from: `SELECT ${COLUMNS} FROM entries WHERE points > 0 AND points <= ?
    AND (points < ? OR reached_at > ? OR (reached_at = ? AND address_key >= ?)) ${ORDER}`,
  at: `SELECT ${COLUMNS} FROM entries WHERE points > 0 ${ORDER} LIMIT ? OFFSET ?`,
  params: [],
  splitParams: (key: RankKey) => [
    key.points,
    key.points,
    key.reachedAt,
    key.reachedAt,
    key.addressKey,
  ],
  offsetParams: (offset: number) => [1, offset],
};

const ENTRIES = PARALLEL_FROM + 50_000;
const addressOf = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

function unpack(batches: PackedEntries[]): RankKey[] {
  const entries: RankKey[] = [];
  for (const batch of batches) {
    const others = new Map(batch.others);
    for (let i = 0; i < batch.count; i++) {
      const bytes = Buffer.from(batch.addresses.subarray(i * 20, i * 20 + 20));
      entries.push({
        addressKey: others.get(i) ?? `0x${bytes.toString('hex')}`,
        points: batch.points[i],
        reachedAt: batch.reachedAt[i],
      });
    }
  }
  return entries;
}

describe('readBoardInWorker', () => {
  let dir: string;
  let file: string;
  let db: Database.Database;
  const truth = () => db.prepare(STATEMENTS.whole).all() as RankKey[];

  async function read(options: Partial<BoardReadOptions> = {}, statements = STATEMENTS) {
    const batches: PackedEntries[] = [];
    await readBoardInWorker(file, statements, (batch) => batches.push(batch), {
      expected: ENTRIES,
      signal: new AbortController().signal,
      stillWanted: () => true,
      ...options,
    });
    return unpack(batches);
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'board-worker-'));
    file = join(dir, 'board.sqlite');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE entries (address_key TEXT PRIMARY KEY, points INTEGER, reached_at INTEGER)',
    );
    db.exec('CREATE INDEX rank ON entries (points DESC, reached_at, address_key)');
    const insert = db.prepare('INSERT INTO entries VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < ENTRIES - 4; i++) {
        // Many ties on points and time: the split key's address breaks them.
        insert.run(addressOf(i), 1 + ((i * 7919) % 50), 1_700_000_000_000 + (i % 7));
      }
      // Addresses the index keeps as text (one holds the character rows are joined with), and
      // numbers that are not plain digits.
      insert.run('alice.eth', 6000, -5);
      insert.run('0x\u001fodd', 6000, 10);
      insert.run(`0x${'g'.repeat(40)}`, 1, 0);
      insert.run(`0x${'a'.repeat(39)}`, 2, 7);
    })();
  });

  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['one reader', 10],
    ['two readers, split at the middle entry', ENTRIES],
    ['two readers, the board smaller than counted: no key, the first reads it all', ENTRIES * 4],
  ])('hands over every entry in rank order, packed or as text (%s)', async (_name, expected) => {
    const entries = await read({ expected });
    expect(JSON.stringify(entries)).toBe(JSON.stringify(truth()));
    expect(entries).toContainEqual({ addressKey: 'alice.eth', points: 6000, reachedAt: -5 });
    expect(entries).toContainEqual({ addressKey: '0x\u001fodd', points: 6000, reachedAt: 10 });
  });

  it('misses no unchanged entry when writes move entries across the split between the parts', async () => {
    const before = truth();
    const moved = new Set<string>();
    const entries = await read({
      // The second part has read its key; before the first part reads, entries from the first
      // half move below the key and new ones rank at the top, shifting every position.
      beforeFirstPart: () => {
        const write = db.prepare('UPDATE entries SET points = 0 WHERE address_key = ?');
        for (const entry of before.slice(0, 1000)) {
          write.run(entry.addressKey);
          moved.add(entry.addressKey);
        }
        const insert = db.prepare('INSERT INTO entries VALUES (?, 1000000, 0)');
        for (let i = 0; i < 500; i++) insert.run(`new-${i}`);
      },
    });
    const seen = new Map<string, number>();
    for (const entry of entries) seen.set(entry.addressKey, (seen.get(entry.addressKey) ?? 0) + 1);
    const unchanged = before.filter((entry) => !moved.has(entry.addressKey));
    expect(unchanged.filter((entry) => seen.get(entry.addressKey) !== 1)).toEqual([]);
    db.exec("DELETE FROM entries WHERE address_key LIKE 'new-%'");
    const restore = db.prepare('UPDATE entries SET points = ? WHERE address_key = ?');
    for (const entry of before.slice(0, 1000)) restore.run(entry.points, entry.addressKey);
  });

  it('stops when the entries are no longer wanted, or at an abort', async () => {
    let asked = 0;
    const some = await read({ stillWanted: () => ++asked <= 2 });
    expect(some.length).toBeGreaterThan(0);
    expect(some.length).toBeLessThan(ENTRIES);
    const controller = new AbortController();
    const aborted = read({ signal: controller.signal });
    controller.abort();
    expect((await aborted).length).toBeLessThan(ENTRIES);
  });

  it('fails for a statement the database cannot run, and for a database not in WAL mode', async () => {
    await expect(
      read({ expected: 10 }, { ...STATEMENTS, whole: 'SELECT missing FROM nowhere' }),
    ).rejects.toThrow(/no such table/);
    const rollback = join(dir, 'rollback.sqlite');
    const other = new Database(rollback);
    other.exec('CREATE TABLE entries (address_key TEXT, points INTEGER, reached_at INTEGER)');
    other.close();
    await expect(
      readBoardInWorker(rollback, STATEMENTS, () => undefined, {
        expected: 10,
        signal: new AbortController().signal,
        stillWanted: () => true,
      }),
    ).rejects.toThrow(/not in WAL mode/);
  });
});
