import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PackedEntries, readBoardInWorker } from './sqlite-board-worker';

const SQL = `SELECT address_key AS addressKey, points, reached_at AS reachedAt FROM entries
  ORDER BY points DESC, reached_at ASC, address_key ASC`;

interface Entry {
  addressKey: string;
  points: number;
  reachedAt: number;
}

function unpack(batches: PackedEntries[]): Entry[] {
  const entries: Entry[] = [];
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
  let truth: Entry[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'board-worker-'));
    file = join(dir, 'board.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(
      'CREATE TABLE entries (address_key TEXT PRIMARY KEY, points INTEGER, reached_at INTEGER)',
    );
    const insert = db.prepare('INSERT INTO entries VALUES (?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 250_000; i++) {
        insert.run(
          `0x${i.toString(16).padStart(40, '0')}`,
          1 + ((i * 7919) % 5000),
          1_700_000_000_000 + i,
        );
      }
      // Addresses the index keeps as text, one with the separator the rows are joined with, and
      // numbers that are not plain digits.
      insert.run('alice.eth', 6000, -5);
      insert.run('0x\u001fodd', 6000, 10);
      insert.run(`0x${'g'.repeat(40)}`, 1, 0);
      insert.run(`0x${'a'.repeat(39)}`, 2, 7);
    })();
    truth = db.prepare(SQL).all() as Entry[];
    db.close();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, expected] of [
    ['one reader', 10],
    ['two readers, halves placed in order', 250_004],
  ] as const) {
    it(`hands over every row in order, packed or as text (${name})`, async () => {
      const batches: PackedEntries[] = [];
      await readBoardInWorker(
        file,
        SQL,
        [],
        expected,
        (batch) => batches.push(batch),
        () => true,
      );
      const entries = unpack(batches);
      expect(entries).toHaveLength(truth.length);
      expect(entries.slice(0, 3)).toEqual(truth.slice(0, 3));
      expect(entries.findIndex((entry, i) => entries[i].addressKey !== truth[i].addressKey)).toBe(
        -1,
      );
      expect(JSON.stringify(entries)).toBe(JSON.stringify(truth));
      expect(entries).toContainEqual({ addressKey: 'alice.eth', points: 6000, reachedAt: -5 });
      expect(entries).toContainEqual({ addressKey: '0x\u001fodd', points: 6000, reachedAt: 10 });
    });
  }

  it('stops when the rows are no longer wanted', async () => {
    let batches = 0;
    await readBoardInWorker(
      file,
      SQL,
      [],
      250_004,
      () => batches++,
      () => batches < 2,
    );
    expect(batches).toBe(2);
  });

  it('fails for a statement the database cannot run', async () => {
    await expect(
      readBoardInWorker(
        file,
        'SELECT missing FROM nowhere',
        [],
        10,
        () => undefined,
        () => true,
      ),
    ).rejects.toThrow(/no such table/);
  });
});
