import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  PrepareSync as PrepareNative,
  SyncStatement as NativeStatement,
} from '../../storage/transactions/transaction-runner';
import { SQLITE } from '../../storage/sqlite/sqlite-dialect';
import type { EntryDelta } from '../ledger/board-totals.store';
import { BacklogLimits, BoardBacklog, DEFAULT_BACKLOG_LIMITS } from './board-backlog';
import type { EntryState } from '../changes/board-change-log';
import type { BoardRef } from '../ranking/ranking';

/** The tables the backlog reads and writes, as the migrations leave them on SQLite. */
const SCHEMA = [
  'CREATE TABLE service_settings (name VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)',
  `CREATE TABLE board_entries (space_id INTEGER NOT NULL, sprint_id INTEGER NOT NULL,
     address_key VARCHAR(128) NOT NULL, points BIGINT NOT NULL, reached_at BIGINT NOT NULL,
     PRIMARY KEY (space_id, sprint_id, address_key)) WITHOUT ROWID`,
  `CREATE INDEX ix_board_entries_rank
     ON board_entries (space_id, sprint_id, points DESC, reached_at, address_key)`,
  `CREATE TABLE board_rank_buckets (space_id INTEGER NOT NULL, sprint_id INTEGER NOT NULL,
     points BIGINT NOT NULL, reached_at BIGINT NOT NULL, address_key VARCHAR(128) NOT NULL,
     entry_count INTEGER NOT NULL,
     PRIMARY KEY (space_id, sprint_id, points DESC, reached_at, address_key)) WITHOUT ROWID`,
  `CREATE TABLE boards (space_id INTEGER NOT NULL, sprint_id INTEGER NOT NULL,
     entry_count INTEGER NOT NULL DEFAULT 0, unfolded_since BIGINT NULL,
     bucket_layout INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (space_id, sprint_id))`,
  `CREATE TABLE board_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
     space_id INTEGER NOT NULL, sprint_id INTEGER NOT NULL, address_key VARCHAR(128) NULL,
     points BIGINT NOT NULL, reached_at BIGINT NOT NULL, created_at BIGINT NOT NULL)`,
];

const ALL_TIME: BoardRef = { spaceId: 1, sprintId: 0 };
const SPRINT: BoardRef = { spaceId: 1, sprintId: 7 };

/** A writer as the ledger drives it: one connection, a backlog, and the change rows it appends. */
class Writer {
  readonly db: Database.Database;
  readonly backlog: BoardBacklog;
  readonly native: PrepareNative;

  constructor(file: string, limits: BacklogLimits = DEFAULT_BACKLOG_LIMITS) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    const statements = new Map<string, NativeStatement>();
    this.native = (sql) => {
      let statement = statements.get(sql);
      if (!statement) statements.set(sql, (statement = this.db.prepare(sql) as NativeStatement));
      return statement;
    };
    this.backlog = new BoardBacklog(SQLITE, limits);
  }

  /** One transaction: `work` adds, folds or forgets; its entries are appended as change rows. */
  transaction(work: (add: (board: BoardRef, deltas: EntryDelta[]) => EntryState[]) => void): void {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.backlog.begin(this.native);
      work((board, deltas) => {
        const states = this.backlog.add(this.native, board, deltas, false);
        for (const s of states) {
          this.db
            .prepare(
              `INSERT INTO board_changes (space_id, sprint_id, address_key, points, reached_at, created_at)
               VALUES (?, ?, ?, ?, ?, 0)`,
            )
            .run(s.spaceId, s.sprintId, s.addressKey, s.points, s.reachedAt);
        }
        return states;
      });
      this.backlog.committing(this.native);
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      this.backlog.rolledBack();
      throw error;
    }
    this.backlog.committed();
  }

  close(): void {
    this.db.close();
  }
}

const delta = (addressKey: string, points: number, reachedAt = 1000): EntryDelta => ({
  addressKey,
  delta: points,
  reachedAt,
});

describe('BoardBacklog', () => {
  let dir: string;
  let file: string;
  let writer: Writer;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'board-backlog-'));
    file = join(dir, 'backlog.sqlite');
    const setup = new Database(file);
    for (const statement of SCHEMA) setup.exec(statement);
    setup.close();
    writer = new Writer(file);
  });
  afterEach(() => {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rows = (board: BoardRef = ALL_TIME) =>
    writer.db
      .prepare(
        `SELECT address_key AS addressKey, points, reached_at AS reachedAt FROM board_entries
         WHERE space_id = ? AND sprint_id = ? ORDER BY address_key`,
      )
      .all(board.spaceId, board.sprintId);
  const unfoldedSince = (board: BoardRef = ALL_TIME) =>
    (
      writer.db
        .prepare('SELECT unfolded_since AS since FROM boards WHERE space_id = ? AND sprint_id = ?')
        .get(board.spaceId, board.sprintId) as { since: number | null } | undefined
    )?.since;
  const fold = (board: BoardRef = ALL_TIME) => {
    let written = 0;
    writer.transaction(() => (written = writer.backlog.fold(writer.native, board)));
    return written;
  };

  it('sums deltas across transactions without writing board_entries, and marks the board', () => {
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 5, 100), delta('0xb', 3, 200)]));
    let states: EntryState[] = [];
    writer.transaction((add) => (states = add(ALL_TIME, [delta('0xa', -2, 50)])));

    expect(states).toEqual([
      { spaceId: 1, sprintId: 0, addressKey: '0xa', points: 3, reachedAt: 100 },
    ]);
    expect(rows()).toEqual([]);
    // The first transaction began at seq 0: its change rows are 1 and 2.
    expect(unfoldedSince()).toBe(1);
    expect(writer.backlog.dirty).toBe(2);
  });

  it('folds the dirty entries into board_entries, inserting new ones and updating stored ones', () => {
    writer.db.prepare('INSERT INTO board_entries VALUES (1, 0, ?, ?, ?)').run('0xstored', 10, 5);
    writer.transaction((add) => add(ALL_TIME, [delta('0xstored', 4, 9), delta('0xnew', 7, 3)]));

    expect(fold()).toBe(2);

    expect(rows()).toEqual([
      { addressKey: '0xnew', points: 7, reachedAt: 3 },
      { addressKey: '0xstored', points: 14, reachedAt: 9 },
    ]);
    expect(unfoldedSince()).toBeNull();
    expect(writer.backlog.dirty).toBe(0);
    // Folded entries stay known: the next delta adds to them without folding twice.
    writer.transaction((add) => add(ALL_TIME, [delta('0xnew', 1, 4)]));
    expect(fold()).toBe(1);
    expect(rows()).toContainEqual({ addressKey: '0xnew', points: 8, reachedAt: 4 });
  });

  it('drops what a rolled-back transaction added, and reads the backlog again after it', () => {
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 5)]));
    expect(() =>
      writer.transaction((add) => {
        add(ALL_TIME, [delta('0xa', 100)]);
        throw new Error('the unit failed');
      }),
    ).toThrow('the unit failed');

    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 1)]));
    fold();

    expect(rows()).toEqual([{ addressKey: '0xa', points: 6, reachedAt: 1000 }]);
  });

  it('reads what another writer left unfolded before adding to it', () => {
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 5), delta('0xb', 1)]));
    const other = new Writer(file);
    try {
      other.transaction((add) => add(ALL_TIME, [delta('0xa', 10)]));
      // This writer's backlog is stale now (0xa = 5): it must notice and read the database's.
      let states: EntryState[] = [];
      writer.transaction((add) => (states = add(ALL_TIME, [delta('0xa', 1)])));
      expect(states[0].points).toBe(16);
      // And the other writer notices this one's write in turn.
      other.transaction((add) => (states = add(ALL_TIME, [delta('0xa', 1), delta('0xb', 1)])));
      expect(states.map((s) => s.points)).toEqual([17, 2]);
    } finally {
      other.close();
    }
    fold();
    expect(rows()).toEqual([
      { addressKey: '0xa', points: 17, reachedAt: 1000 },
      { addressKey: '0xb', points: 2, reachedAt: 1000 },
    ]);
  });

  it("notices another writer's fold: marks the board again, and inserts nothing twice", () => {
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 5)]));
    const other = new Writer(file);
    try {
      other.transaction(() => other.backlog.fold(other.native, ALL_TIME));
    } finally {
      other.close();
    }
    expect(unfoldedSince()).toBeNull();
    // 0xa is in board_entries now, and this writer's next change must be folded in later.
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 1), delta('0xb', 2)]));
    expect(unfoldedSince()).not.toBeNull();
    fold();
    expect(rows()).toEqual([
      { addressKey: '0xa', points: 6, reachedAt: 1000 },
      { addressKey: '0xb', points: 2, reachedAt: 1000 },
    ]);
  });

  it('after a restart, folds what the last process left unfolded, and no change before a reset', () => {
    writer.transaction((add) => {
      add(ALL_TIME, [delta('0xa', 5), delta('0xb', 2)]);
      add(SPRINT, [delta('0xs', 5)]);
    });
    // One transaction: a deferred add, a direct one (a bulk write: board folded, written, then
    // announced by a reset row), and a deferred one again. The board's unfolded_since now lies
    // before the reset row, and 0xa's change row before it holds 6 where board_entries holds 9.
    writer.transaction((add) => {
      add(ALL_TIME, [delta('0xa', 1)]);
      writer.backlog.add(writer.native, ALL_TIME, [delta('0xa', 3)], true);
      writer.db.prepare('INSERT INTO board_changes VALUES (NULL, 1, 0, NULL, 0, 0, 0)').run();
      add(ALL_TIME, [delta('0xc', 1)]);
    });
    writer.close();

    writer = new Writer(file);
    writer.transaction(() => {
      // 0xc on the all-time board (0xa and 0xb were folded by the direct add), 0xs on the sprint.
      expect(writer.backlog.dirty).toBe(2);
      writer.backlog.fold(writer.native, ALL_TIME);
      writer.backlog.fold(writer.native, SPRINT);
    });

    expect(rows()).toEqual([
      { addressKey: '0xa', points: 9, reachedAt: 1000 },
      { addressKey: '0xb', points: 2, reachedAt: 1000 },
      { addressKey: '0xc', points: 1, reachedAt: 1000 },
    ]);
    expect(rows(SPRINT)).toEqual([{ addressKey: '0xs', points: 5, reachedAt: 1000 }]);
    expect(unfoldedSince()).toBeNull();
  });

  it('writes a direct add at once, folding the board first', () => {
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 5), delta('0xb', 1)]));
    writer.transaction(() =>
      writer.backlog.add(writer.native, ALL_TIME, [delta('0xa', 2), delta('0xc', 3)], true),
    );

    expect(rows()).toEqual([
      { addressKey: '0xa', points: 7, reachedAt: 1000 },
      { addressKey: '0xb', points: 1, reachedAt: 1000 },
      { addressKey: '0xc', points: 3, reachedAt: 1000 },
    ]);
    expect(unfoldedSince()).toBeNull();
    expect(writer.backlog.dirty).toBe(0);
  });

  it('forgets a rebuilt board: later deltas add to the rebuilt rows', () => {
    writer.transaction((add) => add(SPRINT, [delta('0xa', 5)]));
    writer.transaction(() => {
      writer.backlog.forget(writer.native, SPRINT);
      writer.db.prepare('INSERT INTO board_entries VALUES (1, 7, ?, 40, 1)').run('0xa');
    });
    writer.transaction((add) => add(SPRINT, [delta('0xa', 2, 0)]));
    fold(SPRINT);

    expect(rows(SPRINT)).toEqual([{ addressKey: '0xa', points: 42, reachedAt: 1 }]);
  });

  it('is due to fold the board with the most dirty entries past maxDirty, or one waiting too long', () => {
    writer.close();
    writer = new Writer(file, { ...DEFAULT_BACKLOG_LIMITS, maxDirty: 2 });
    writer.transaction((add) => {
      add(ALL_TIME, [delta('0xa', 1)]);
      add(SPRINT, [delta('0xa', 1), delta('0xb', 1)]);
    });
    expect(writer.backlog.due()).toEqual(SPRINT);

    fold(SPRINT);
    expect(writer.backlog.due()).toBeUndefined();
    expect(writer.backlog.due(Date.now() + 60_000)).toEqual(ALL_TIME);
  });

  it('folds a due board maxFold entries at a time, in address order, clearing its mark at the end', () => {
    writer.close();
    writer = new Writer(file, { ...DEFAULT_BACKLOG_LIMITS, maxDirty: 0, maxFold: 2 });
    writer.transaction((add) => add(ALL_TIME, [delta('0xc', 3), delta('0xa', 1), delta('0xb', 2)]));
    writer.transaction(() => expect(writer.backlog.foldDue(writer.native)).toBe(2));
    expect(rows().map((r: any) => r.addressKey)).toEqual(['0xa', '0xb']);
    expect(unfoldedSince()).toBe(1);
    writer.transaction(() => expect(writer.backlog.foldDue(writer.native)).toBe(1));
    expect(rows().map((r: any) => r.addressKey)).toEqual(['0xa', '0xb', '0xc']);
    expect(unfoldedSince()).toBeNull();
    writer.transaction(() => expect(writer.backlog.foldDue(writer.native)).toBe(0));
  });

  it('keeps dirty entries and forgets clean ones past maxEntries', () => {
    writer.close();
    writer = new Writer(file, { ...DEFAULT_BACKLOG_LIMITS, maxEntries: 3 });
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 1), delta('0xb', 1)]));
    fold();
    writer.transaction((add) => add(ALL_TIME, [delta('0xc', 1), delta('0xd', 1)]));

    expect(writer.backlog.dirty).toBe(2);
    // The clean ones are read from board_entries again.
    writer.transaction((add) => add(ALL_TIME, [delta('0xa', 1)]));
    fold();
    expect(rows()).toEqual([
      { addressKey: '0xa', points: 2, reachedAt: 1000 },
      { addressKey: '0xb', points: 1, reachedAt: 1000 },
      { addressKey: '0xc', points: 1, reachedAt: 1000 },
      { addressKey: '0xd', points: 1, reachedAt: 1000 },
    ]);
  });

  it('forgets an entry it cannot keep once a direct add wrote past it, rather than keep it stale', () => {
    writer.close();
    writer = new Writer(file, { ...DEFAULT_BACKLOG_LIMITS, maxEntries: 1 });
    writer.transaction(() => writer.backlog.add(writer.native, ALL_TIME, [delta('0xa', 5)], true));
    let states: EntryState[] = [];
    writer.transaction((add) => {
      writer.backlog.add(writer.native, ALL_TIME, [delta('0xb', 1), delta('0xa', 2)], true);
      states = add(ALL_TIME, [delta('0xa', 1)]);
    });
    expect(states[0].points).toBe(8);
  });

  it('refuses to add outside a transaction', () => {
    expect(() => writer.backlog.add(writer.native, ALL_TIME, [delta('0xa', 1)], false)).toThrow(
      /TransactionRunner/,
    );
  });
});
