import type { PrepareSync, SyncStatement } from '../../storage/transactions/transaction-runner';
import type { BoardChange } from '../changes/board-change-feed';
import type { EntryState } from '../changes/board-change-log';
import type { EntryDelta } from '../ledger/board-totals.store';
import type { BoardRef } from '../ranking/ranking';
import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import { RankBucketSql } from '../rank-buckets/rank-bucket-sql';
import {
  BucketStep,
  BucketWork,
  EntryMove,
  moveCounts,
  RANK_BUCKETS,
  runSync,
  splitsFor,
  tidy,
} from '../rank-buckets/rank-buckets';

/** An entry's total as its board holds it. */
export interface Total {
  points: number;
  reachedAt: number;
}

interface Entry extends Total {
  /** Its state is in board_changes and not yet in board_entries. */
  dirty: boolean;
  /** Whether board_entries has a row for it; undefined: not known (read from board_changes). */
  stored: boolean | undefined;
}

/** One board's entries as the backlog knows them. */
class BoardPart {
  readonly entries = new Map<string, Entry>();
  /** Entries that are dirty. */
  dirty = 0;
  /** When the board's oldest unfolded change was made (Date.now()), 0 when not known. */
  dirtySince = 0;

  constructor(readonly board: BoardRef) {}
}

/** What a transaction did so far: applied to the backlog when it commits, dropped otherwise. */
class Pending {
  /** Entries the transaction wrote, or folded (as clean copies). */
  readonly parts = new Map<string, BoardPart>();
  /** Boards rebuilt from the ledger: what the backlog held of them is stale. */
  readonly forgotten = new Set<string>();
  /** Whether each board touched has unfolded changes as the transaction leaves it. */
  readonly unfolded = new Map<string, boolean>();
  /** Where the database stands at the commit. */
  end: Stand = { seq: 0, folds: 0 };

  constructor(readonly begin: Stand) {}
}

/**
 * Where the database stands, as far as the backlog is concerned: board_changes' highest seq, and
 * how many folds were ever made (service_settings 'board_folds'). Another process that writes
 * boards moves the first; one that folds them, the second.
 */
interface Stand {
  seq: number;
  folds: number;
}

export interface BacklogLimits {
  /** Dirty entries above which a transaction's start folds the board with the most. */
  maxDirty: number;
  /** Entries (dirty or clean) above which clean ones are forgotten after a commit. */
  maxEntries: number;
  /** A board with a change unfolded for longer is folded at a transaction's start. */
  maxAgeMs: number;
  /**
   * Entries a fold writes at most, at a transaction's start or while idle (a reader's fold writes
   * all): the transaction holds the write lock meanwhile.
   */
  maxFold: number;
}

/**
 * Enough to hold the boards of 100,000 addresses, each on the all-time board and a sprint, dirty
 * at once; the memory this costs is in docs/adr/0002-sqlite-backlog.md.
 */
export const DEFAULT_BACKLOG_LIMITS: BacklogLimits = {
  maxDirty: 400_000,
  maxEntries: 600_000,
  maxAgeMs: 60_000,
  maxFold: 50_000,
};

/**
 * SQLite: board totals whose latest state is in board_changes but not yet in board_entries (folded
 * later, many at a time: docs/adr/0002-sqlite-backlog.md), and a cache of totals known stored.
 * Exact while board_changes' highest seq and the fold count ('board_folds') are those of its last
 * commit, since every other write of board_entries appends to board_changes; otherwise, or after
 * a rollback, it is read again from the database. Only TransactionRunner's transactions use it.
 */
export class BoardBacklog {
  private readonly parts = new Map<string, BoardPart>();
  private entries = 0;
  private dirtyEntries = 0;
  /** Where the database stood at this backlog's last commit; undefined: read it again. */
  private known?: Stand;
  private pending?: Pending;

  /** The rank buckets' statements, in the writer's dialect. */
  private readonly buckets: RankBucketSql;

  constructor(
    dialect: SqlDialect,
    private readonly limits: BacklogLimits = DEFAULT_BACKLOG_LIMITS,
  ) {
    this.buckets = new RankBucketSql(dialect);
  }

  /** Dirty entries, across boards. */
  get dirty(): number {
    return this.dirtyEntries;
  }

  /** The transaction holds the write lock: makes sure the backlog is the database's. */
  begin(native: PrepareSync): void {
    const stand = standOf(native);
    if (stand.seq !== this.known?.seq || stand.folds !== this.known.folds)
      this.reload(native, stand);
    this.pending = new Pending(stand);
  }

  committing(native: PrepareSync): void {
    this.transaction().end = standOf(native);
  }

  committed(now = Date.now()): void {
    const pending = this.transaction();
    this.pending = undefined;
    for (const key of pending.forgotten) this.drop(key);
    for (const own of pending.parts.values()) {
      const part = this.committedPart(own.board);
      for (const [addressKey, entry] of own.entries) this.setKnown(part, addressKey, entry, now);
    }
    this.known = pending.end;
    if (this.entries > this.limits.maxEntries) this.forgetClean();
  }

  /** Forgets everything: the next transaction reads the backlog from the database. */
  rolledBack(): void {
    this.pending = undefined;
    this.known = undefined;
    this.parts.clear();
    this.entries = 0;
    this.dirtyEntries = 0;
  }

  /**
   * Adds each delta to its entry of the board, and answers the entries as they now stand, in the
   * order given. `direct`: written to board_entries now (the board is folded first); otherwise
   * left to the caller's board_changes rows, which it must append in this transaction.
   */
  add(
    native: PrepareSync,
    board: BoardRef,
    deltas: readonly EntryDelta[],
    direct: boolean,
  ): EntryState[] {
    const pending = this.transaction();
    const key = keyOf(board);
    if (direct) {
      // Once per transaction: a bulk write comes in parts of a few hundred entries.
      if (this.hasUnfolded(key)) this.fold(native, board);
    } else if (!this.hasUnfolded(key)) {
      // Every change row this transaction appends comes after the seq it began at.
      markUnfolded(native, board, pending.begin.seq + 1);
      pending.unfolded.set(key, true);
    }
    const own = this.ownPart(board);
    const writer = direct ? new EntryWriter(native, this.buckets, board) : undefined;
    // Written at once: board_entries holds them, whatever the backlog does. They go to the
    // backlog's clean entries straight away (a rollback forgets everything anyway), not through
    // the transaction's, which a bulk write of hundreds of thousands would copy again at its
    // commit; unless the transaction holds the entry already, which then has to move on.
    const known = direct && !pending.forgotten.has(key) ? this.committedPart(board) : undefined;
    const states = deltas.map(({ addressKey, delta, reachedAt }): EntryState => {
      const current = this.current(native, board, key, addressKey);
      const entry: Entry = current
        ? {
            points: current.points + delta,
            reachedAt: Math.max(current.reachedAt, reachedAt),
            dirty: !direct,
            stored: current.stored,
          }
        : { points: delta, reachedAt, dirty: !direct, stored: false };
      if (writer) {
        writer.write(addressKey, entry);
        entry.stored = true;
      }
      if (!known || own.entries.has(addressKey)) setOwn(own, addressKey, entry);
      else if (this.entries < this.limits.maxEntries) this.setKnown(known, addressKey, entry);
      // A full cache would forget it at the commit: gone now, lest a stale total stay.
      else this.setKnown(known, addressKey);
      const { spaceId, sprintId } = board;
      return { spaceId, sprintId, addressKey, points: entry.points, reachedAt: entry.reachedAt };
    });
    writer?.flush();
    return states;
  }

  /** An entry's total as this transaction sees it; undefined when the board has no such entry. */
  total(native: PrepareSync, board: BoardRef, addressKey: string): Total | undefined {
    return this.current(native, board, keyOf(board), addressKey);
  }

  /**
   * Writes the board's dirty entries to board_entries, in address order (the table's), and clears
   * its unfolded_since; with `limit`, the first `limit` of them in that order, and the rest wait
   * for the next fold (unfolded_since stays). Answers how many it wrote.
   */
  fold(native: PrepareSync, board: BoardRef, limit = Infinity): number {
    const pending = this.transaction();
    const key = keyOf(board);
    const own = this.ownPart(board);
    const dirty: Array<[string, Entry]> = [];
    for (const item of own.entries) if (item[1].dirty) dirty.push(item);
    const committed = pending.forgotten.has(key) ? undefined : this.parts.get(key);
    if (committed && committed.dirty > 0) {
      for (const item of committed.entries) {
        if (item[1].dirty && !own.entries.has(item[0])) dirty.push(item);
      }
    }
    dirty.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const written = Math.min(dirty.length, limit);
    const writer = new EntryWriter(native, this.buckets, board);
    for (let i = 0; i < written; i++) {
      const [addressKey, entry] = dirty[i];
      writer.write(addressKey, entry);
      setOwn(own, addressKey, { ...entry, dirty: false, stored: true });
    }
    writer.flush();
    // Other writers' backlogs read themselves again. Nothing written: theirs hold nothing
    // unfolded of this board either (each is the database's at its transaction's start).
    if (written > 0) native(COUNT_FOLD).run();
    if (written < dirty.length) return written;
    markFolded(native, board);
    pending.unfolded.set(key, false);
    return written;
  }

  /** At a transaction's start: folds part of a board that is due (see due), if one is. */
  foldDue(native: PrepareSync, now = Date.now()): number {
    const board = this.due(now);
    return board ? this.fold(native, board, this.limits.maxFold) : 0;
  }

  /** While the writer is idle: folds part of the board with the most dirty entries. */
  foldMostDirty(native: PrepareSync): number {
    const board = this.mostDirty();
    return board ? this.fold(native, board, this.limits.maxFold) : 0;
  }

  /** The board was rebuilt from the ledger (a sprint's rebuild): what the backlog held is stale. */
  forget(native: PrepareSync, board: BoardRef): void {
    const pending = this.transaction();
    const key = keyOf(board);
    pending.parts.delete(key);
    pending.forgotten.add(key);
    markFolded(native, board);
    pending.unfolded.set(key, false);
  }

  /**
   * The board to fold at a transaction's start, if any: the one with the most dirty entries when
   * there are too many, else one whose oldest unfolded change waited too long.
   */
  due(now = Date.now()): BoardRef | undefined {
    if (this.dirtyEntries > this.limits.maxDirty) return this.mostDirty();
    for (const part of this.parts.values()) {
      if (part.dirty > 0 && now - part.dirtySince >= this.limits.maxAgeMs) return part.board;
    }
    return undefined;
  }

  /** The board with the most dirty entries, if any is dirty. */
  mostDirty(): BoardRef | undefined {
    let most: BoardPart | undefined;
    for (const part of this.parts.values()) {
      if (part.dirty > 0 && part.dirty > (most?.dirty ?? 0)) most = part;
    }
    return most?.board;
  }

  private transaction(): Pending {
    if (!this.pending)
      throw new Error('SQLite board writes must run in a transaction of TransactionRunner');
    return this.pending;
  }

  private ownPart(board: BoardRef): BoardPart {
    const parts = this.transaction().parts;
    const key = keyOf(board);
    let part = parts.get(key);
    if (!part) parts.set(key, (part = new BoardPart(board)));
    return part;
  }

  private committedPart(board: BoardRef): BoardPart {
    const key = keyOf(board);
    let part = this.parts.get(key);
    if (!part) this.parts.set(key, (part = new BoardPart(board)));
    return part;
  }

  /** Sets (or, with no entry, deletes) a committed entry, keeping the counts. */
  private setKnown(part: BoardPart, addressKey: string, entry?: Entry, now = Date.now()): void {
    const prior = part.entries.get(addressKey);
    if (prior) {
      this.entries--;
      if (prior.dirty) {
        part.dirty--;
        this.dirtyEntries--;
      }
    }
    if (!entry) {
      part.entries.delete(addressKey);
      return;
    }
    this.entries++;
    if (entry.dirty) {
      if (part.dirty === 0) part.dirtySince = now;
      part.dirty++;
      this.dirtyEntries++;
    }
    part.entries.set(addressKey, entry);
  }

  private hasUnfolded(key: string): boolean {
    return this.transaction().unfolded.get(key) ?? (this.parts.get(key)?.dirty ?? 0) > 0;
  }

  /** The entry as this transaction sees it: its own write, the backlog's, or board_entries'. */
  private current(
    native: PrepareSync,
    board: BoardRef,
    key: string,
    addressKey: string,
  ): Entry | undefined {
    const pending = this.transaction();
    const own = pending.parts.get(key)?.entries.get(addressKey);
    if (own) return own;
    if (!pending.forgotten.has(key)) {
      const known = this.parts.get(key)?.entries.get(addressKey);
      if (known) return known;
    }
    const row = native(READ_ENTRY).get(board.spaceId, board.sprintId, addressKey) as
      Total | undefined;
    return row && { points: row.points, reachedAt: row.reachedAt, dirty: false, stored: true };
  }

  private drop(key: string): void {
    const part = this.parts.get(key);
    if (!part) return;
    this.entries -= part.entries.size;
    this.dirtyEntries -= part.dirty;
    this.parts.delete(key);
  }

  /** Over the memory limit: keeps the dirty entries only. */
  private forgetClean(): void {
    for (const part of this.parts.values()) {
      if (part.dirty === 0) {
        part.entries.clear();
        continue;
      }
      for (const [addressKey, entry] of part.entries) {
        if (!entry.dirty) part.entries.delete(addressKey);
      }
    }
    this.entries = this.dirtyEntries;
  }

  /**
   * Reads the backlog from the database: for each board with unfolded changes, the latest state
   * of each entry changed since its unfolded_since, a reset row dropping what came before it.
   */
  private reload(native: PrepareSync, stand: Stand): void {
    const { seq } = stand;
    this.rolledBack();
    const since = new Map<string, number>();
    let from = Infinity;
    for (const row of native(UNFOLDED_BOARDS).all() as UnfoldedRow[]) {
      const board = { spaceId: row.spaceId, sprintId: row.sprintId };
      since.set(keyOf(board), row.since);
      this.parts.set(keyOf(board), new BoardPart(board));
      from = Math.min(from, row.since);
    }
    if (since.size > 0) {
      for (const row of native(CHANGES_SINCE).iterate(from, seq) as Iterable<BoardChange>) {
        const key = keyOf(row);
        const part = this.parts.get(key);
        if (!part || row.seq < since.get(key)!) continue;
        if (row.addressKey === null) {
          part.entries.clear();
          continue;
        }
        part.entries.set(row.addressKey, {
          points: row.points,
          reachedAt: row.reachedAt,
          dirty: true,
          stored: undefined,
        });
      }
      for (const part of this.parts.values()) {
        part.dirty = part.entries.size;
        this.entries += part.dirty;
        this.dirtyEntries += part.dirty;
      }
    }
    this.known = stand;
  }
}

/**
 * Writes entries of one board to board_entries, by whether each has a row there, and then
 * ({@link flush}) moves the board's rank buckets by them, splitting in the same transaction: the
 * writer holds the whole database, so the buckets are exact as read.
 */
class EntryWriter {
  private readonly read: SyncStatement;
  private readonly update: SyncStatement;
  private readonly insert: SyncStatement;
  private readonly upsert: SyncStatement;
  private readonly moves: EntryMove[] = [];

  constructor(
    private readonly native: PrepareSync,
    private readonly buckets: RankBucketSql,
    private readonly board: BoardRef,
  ) {
    this.read = native(READ_ENTRY);
    this.update = native(UPDATE_ENTRY);
    this.insert = native(INSERT_ENTRY);
    this.upsert = native(UPSERT_ENTRY);
  }

  write(addressKey: string, { points, reachedAt, stored }: Entry): void {
    const { spaceId, sprintId } = this.board;
    // The entry as board_entries holds it until now, for the buckets.
    const old =
      stored === false
        ? undefined
        : (this.read.get(spaceId, sprintId, addressKey) as Total | undefined);
    this.moves.push({
      before: old && old.points > 0 ? { addressKey, ...old } : null,
      after: points > 0 ? { addressKey, points, reachedAt } : null,
    });
    if (stored === undefined) {
      this.upsert.run(spaceId, sprintId, addressKey, points, reachedAt);
    } else if (stored) {
      const { changes } = this.update.run(points, reachedAt, spaceId, sprintId, addressKey);
      // The backlog is exact or it is read again (see BoardBacklog): a missing row is a bug.
      if (changes !== 1) throw new Error(`board entry ${addressKey} is missing from its board`);
    } else {
      this.insert.run(spaceId, sprintId, addressKey, points, reachedAt);
    }
  }

  /** Moves the board's rank buckets by the entries written so far. */
  flush(): void {
    if (this.moves.length === 0) return;
    const moves = this.moves.splice(0);
    const run = (step: BucketStep): Array<Record<string, unknown>> => {
      const statement = this.native(step.sql);
      if (!step.write) return statement.all(...step.params) as Array<Record<string, unknown>>;
      statement.run(...step.params);
      return [];
    };
    const { board, buckets } = this;
    function* entriesNow(): BucketWork<number> {
      // Up to the size from which boards keep buckets first: below it, a small count each fold.
      const [some] = yield buckets.countBoard(board, RANK_BUCKETS.fromEntries);
      if (Number(some.n) < RANK_BUCKETS.fromEntries) return Number(some.n);
      const [row] = yield buckets.countBoard(board);
      return Number(row.n);
    }
    const untidy = runSync(
      moveCounts(buckets, board, moves, { entriesNow, rowsPerStatement: 1 }),
      run,
    );
    runSync(tidy(buckets, board, untidy, splitsFor(moves.length)), run);
  }
}

function setOwn(part: BoardPart, addressKey: string, entry: Entry): void {
  const prior = part.entries.get(addressKey);
  if (prior?.dirty) part.dirty--;
  if (entry.dirty) part.dirty++;
  part.entries.set(addressKey, entry);
}

function standOf(native: PrepareSync): Stand {
  const seq = (native(HIGHEST_SEQ).get() as { seq: number } | undefined)?.seq ?? 0;
  const folds = (native(FOLDS).get() as { folds: number } | undefined)?.folds ?? 0;
  return { seq, folds };
}

function markUnfolded(native: PrepareSync, board: BoardRef, since: number): void {
  native(MARK_UNFOLDED).run(board.spaceId, board.sprintId, since);
}

function markFolded(native: PrepareSync, board: BoardRef): void {
  native(MARK_FOLDED).run(board.spaceId, board.sprintId);
}

const keyOf = (board: BoardRef): string => `${board.spaceId}/${board.sprintId}`;

interface UnfoldedRow {
  spaceId: number;
  sprintId: number;
  since: number;
}

// AUTOINCREMENT keeps the highest seq ever handed out here, also once the rows are pruned.
const HIGHEST_SEQ = "SELECT seq FROM sqlite_sequence WHERE name = 'board_changes'";
const FOLDS =
  "SELECT CAST(value AS INTEGER) AS folds FROM service_settings WHERE name = 'board_folds'";
const COUNT_FOLD = `INSERT INTO service_settings (name, value) VALUES ('board_folds', '1')
  ON CONFLICT (name) DO UPDATE SET value = CAST(value AS INTEGER) + 1`;
const UNFOLDED_BOARDS = `SELECT space_id AS spaceId, sprint_id AS sprintId, unfolded_since AS since
  FROM boards WHERE unfolded_since IS NOT NULL`;
const CHANGES_SINCE = `SELECT seq, space_id AS spaceId, sprint_id AS sprintId,
  address_key AS addressKey, points, reached_at AS reachedAt
  FROM board_changes WHERE seq >= ? AND seq <= ? ORDER BY seq`;
const MARK_UNFOLDED = `INSERT INTO boards (space_id, sprint_id, entry_count, unfolded_since)
  VALUES (?, ?, 0, ?)
  ON CONFLICT (space_id, sprint_id) DO UPDATE SET unfolded_since = excluded.unfolded_since`;
const MARK_FOLDED = `UPDATE boards SET unfolded_since = NULL
  WHERE space_id = ? AND sprint_id = ? AND unfolded_since IS NOT NULL`;
const READ_ENTRY = `SELECT points, reached_at AS reachedAt FROM board_entries
  WHERE space_id = ? AND sprint_id = ? AND address_key = ?`;
const UPDATE_ENTRY = `UPDATE board_entries SET points = ?, reached_at = ?
  WHERE space_id = ? AND sprint_id = ? AND address_key = ?`;
const INSERT_ENTRY = `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
  VALUES (?, ?, ?, ?, ?)`;
const UPSERT_ENTRY = `${INSERT_ENTRY}
  ON CONFLICT (space_id, sprint_id, address_key)
  DO UPDATE SET points = excluded.points, reached_at = excluded.reached_at`;
