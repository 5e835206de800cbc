import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { addressKeyOf } from '../../common/address-key';
import type { PointsRecord } from '../../records/ingest-record';
import { RecordOutcome, accepted, duplicate, refused } from '../../records/record-outcome';
import { ProfilesService } from '../../profiles/profiles.service';
import type { SprintEntity } from '../../spaces/sprint.entity';
import { SpacesService } from '../../spaces/spaces.service';
import { chunk, num, SqlDialect } from '../../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../../storage/sql-dialect.provider';
import { insertRows } from '../../storage/insert-rows';
import { BoardTotalsStore } from './board-totals.store';
import { PointsEventEntity } from './points-event.entity';
import {
  announceAsReset,
  appendBoardReset,
  appendEntryChanges,
  RESET_MIN_CHANGES,
} from '../changes/board-change-log';
import { ALL_TIME_SPRINT_ID } from '../ranking/ranking';
import { RankBucketSql } from '../rank-buckets/rank-bucket-sql';
import { rebuildBuckets, runAsync } from '../rank-buckets/rank-buckets';
import { query } from '../../storage/statements';

interface LedgerEvent {
  key: string;
  spaceId: number;
  addressKey: string;
  address: string;
  points: number;
  occurredAt: number;
  reason: string | null;
}

/** A ledger entry as an address's history shows it; `occurredAt` in epoch ms. */
export interface AddressLedgerEntry {
  key: string;
  points: number;
  occurredAt: number;
  reason: string | null;
}

/** Where a page of an address's ledger starts: an entry's time and key, newest first. */
export interface LedgerPosition {
  occurredAt: number;
  key: string;
}

/** A page of an address's ledger, newest first, and whether entries lie beyond each end. */
export interface AddressLedgerPage {
  events: AddressLedgerEntry[];
  older: boolean;
  newer: boolean;
}

/** One (board, address) pair that a batch of events changes. */
interface EntryChange {
  spaceId: number;
  sprintId: number;
  addressKey: string;
  /** The sum of the events' points, and its highest and lowest running values on the way. */
  delta: number;
  highest: number;
  lowest: number;
  /** The latest occurredAt of the events. */
  reachedAt: number;
}

const IN_CHUNK = 500;
/** Board totals are served as GraphQL Int (32-bit signed). */
const MAX_TOTAL = 2_147_483_647;
const OVERFLOW_REASON =
  'would take the total of this address beyond 2147483647 (or below -2147483647)';

/**
 * How points are checked against the Int range. `optimistic` adds them without reading the totals
 * first and throws {@link TotalOutOfRange} if some total left the range on the way; `careful`
 * reads the totals first and refuses the records that would take one out.
 */
export type RangeCheck = 'optimistic' | 'careful';

/**
 * An optimistic pass found a total out of range (rare). Its writes are already made: the caller
 * rolls the transaction back and runs the whole unit again with `careful`.
 */
export class TotalOutOfRange extends Error {
  constructor() {
    super('a points total would leave the Int range; run the unit again with careful checks');
  }
}

/**
 * Applies points to the ledger and to every board they count on (all-time, and each sprint whose
 * window holds the event), inside the caller's transaction. A key is applied once: the same key
 * with the same content again is a duplicate that changes nothing; with other content, a refusal.
 *
 * Totals are written once per (board, address) per batch (see applyEvents).
 */
@Injectable()
export class PointsLedgerService {
  private readonly buckets: RankBucketSql;

  constructor(
    private readonly spaces: SpacesService,
    private readonly profiles: ProfilesService,
    private readonly totalsStore: BoardTotalsStore,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
    @InjectRepository(PointsEventEntity) private readonly events: Repository<PointsEventEntity>,
  ) {
    this.buckets = new RankBucketSql(dialect);
  }

  /** The ledger entry a points key was applied as, or null when the key was never applied. */
  async eventByKey(
    key: string,
  ): Promise<(AddressLedgerEntry & { spaceId: number; addressKey: string }) | null> {
    const row = await this.events.findOneBy({ key });
    return row
      ? {
          key: row.key,
          spaceId: row.spaceId,
          addressKey: row.addressKey,
          points: row.points,
          occurredAt: row.occurredAt,
          reason: row.reason,
        }
      : null;
  }

  /**
   * A page of one address's ledger entries in a space, newest first (entries of one time by key,
   * descending), at most `limit`: the newest, those older than `before`, or those newer than `after`.
   * `older` and `newer` tell whether entries lie beyond the page's ends (the one opposite the
   * cursor costs a second one-row read). Both orders run along the (space_id, address_key,
   * occurred_at) index, whose rows end with the primary key event_key on both databases: no sort.
   */
  async addressEvents(
    spaceId: number,
    address: string,
    page: { limit: number; before?: LedgerPosition; after?: LedgerPosition },
  ): Promise<AddressLedgerPage> {
    const addressKey = addressKeyOf(address);
    const forward = page.after === undefined;
    const rows = await this.ledgerRows(
      spaceId,
      addressKey,
      forward ? 'older' : 'newer',
      forward ? page.before : page.after,
      page.limit + 1,
    );
    const events = rows.slice(0, page.limit);
    if (!forward) events.reverse();
    const more = rows.length > page.limit;
    // Beyond the end opposite the cursor (none without one): past the page's entry at that end,
    // or past the cursor when the page is empty.
    const cursor = forward ? page.before : page.after;
    const edge = (forward ? events[0] : events[events.length - 1]) ?? cursor;
    const beyond =
      edge !== undefined &&
      cursor !== undefined &&
      (await this.ledgerRows(spaceId, addressKey, forward ? 'newer' : 'older', edge, 1)).length > 0;
    return {
      events,
      older: forward ? more : beyond,
      newer: forward ? beyond : more,
    };
  }

  /**
   * Up to `limit` entries `older` than `at` (newest first) or `newer` (oldest first); without
   * `at`, from the newest or the oldest. Named index: with the OR, SQLite may otherwise join two
   * ranges (the primary key's for event_key) and sort them, 100 ms for 100,000 entries, and
   * MariaDB walk the space's time index instead.
   */
  private async ledgerRows(
    spaceId: number,
    addressKey: string,
    direction: 'older' | 'newer',
    at: LedgerPosition | undefined,
    limit: number,
  ): Promise<AddressLedgerEntry[]> {
    const [past, order] = direction === 'newer' ? ['>', 'ASC'] : ['<', 'DESC'];
    // The time as a range of its own, so that the index is read from the position on.
    const from = at
      ? ` AND occurred_at ${past}= ? AND (occurred_at ${past} ? OR event_key ${past} ?)`
      : '';
    const rows: Array<Record<string, unknown>> = await query(
      this.events.manager,
      `SELECT event_key AS eventKey, points, occurred_at AS occurredAt, reason
       FROM ${this.dialect.withIndex('points_events', 'ix_points_events_address')}
       WHERE space_id = ? AND address_key = ?${from}
       ORDER BY occurred_at ${order}, event_key ${order} LIMIT ?`,
      [spaceId, addressKey, ...(at ? [at.occurredAt, at.occurredAt, at.key] : []), limit],
    );
    return rows.map((row) => ({
      key: String(row.eventKey),
      points: num(row.points),
      occurredAt: num(row.occurredAt),
      reason: typeof row.reason === 'string' ? row.reason : null,
    }));
  }

  async ingestPoints(
    manager: EntityManager,
    records: readonly PointsRecord[],
    rangeCheck: RangeCheck,
  ): Promise<RecordOutcome[]> {
    // Shared locks on the spaces first: a sprint upsert takes its space exclusively, so on MySQL a
    // sprint's rebuild and points for its space never interleave (neither would see the other).
    const known = await this.spaces.lockSpaces(
      manager,
      [...new Set(records.map((r) => r.spaceId))],
      'shared',
    );
    const seen = await this.storedEvents(manager, [...new Set(records.map((r) => r.key))]);
    const fresh: LedgerEvent[] = [];
    const outcomes = records.map((record): RecordOutcome => {
      if (!known.has(record.spaceId)) return refused('spaceId', `unknown space ${record.spaceId}`);
      const event: LedgerEvent = {
        key: record.key,
        spaceId: record.spaceId,
        addressKey: addressKeyOf(record.address),
        address: record.address,
        points: record.points,
        occurredAt: record.occurredAt,
        reason: record.reason ?? null,
      };
      const prior = seen.get(record.key);
      if (prior) {
        return sameContent(prior, event)
          ? duplicate()
          : refused('key', 'was already used for a different points record');
      }
      seen.set(record.key, event);
      fresh.push(event);
      return accepted();
    });
    if (fresh.length === 0) return outcomes;
    const overflowing = await this.applyEvents(manager, fresh, rangeCheck);
    // A refused record refuses the later copies of its key in the same batch too.
    return records.map((record, i) =>
      overflowing.has(record.key) && outcomes[i].status !== 'refused'
        ? refused('points', OVERFLOW_REASON)
        : outcomes[i],
    );
  }

  /**
   * Recomputes a sprint's board from the ledger: for a new sprint or one whose window moved. Its
   * rank buckets are made again from the new entries (the space's lock keeps its writers out).
   */
  async rebuildSprintBoard(manager: EntityManager, sprint: SprintEntity): Promise<void> {
    this.totalsStore.forget(manager, { spaceId: sprint.spaceId, sprintId: sprint.id });
    const board = [sprint.spaceId, sprint.id];
    await query(manager, 'DELETE FROM board_entries WHERE space_id = ? AND sprint_id = ?', board);
    const { where, params } = this.dialect.ledgerWindow(
      sprint.spaceId,
      sprint.startTime,
      sprint.endTime,
    );
    await query(
      manager,
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
       SELECT space_id, ?, address_key, SUM(points), MAX(occurred_at) FROM points_events
       WHERE ${where}
       GROUP BY space_id, address_key`,
      [sprint.id, ...params],
    );
    const [row]: Array<Record<string, unknown>> = await query(
      manager,
      'SELECT COUNT(*) AS entries FROM board_entries WHERE space_id = ? AND sprint_id = ? AND points > 0',
      board,
    );
    await this.writeEntryCount(manager, sprint.spaceId, sprint.id, 'set', num(row.entries));
    await runAsync(
      rebuildBuckets(this.buckets, { spaceId: sprint.spaceId, sprintId: sprint.id }),
      (sql, params) => query(manager, sql, params),
    );
    await appendBoardReset(manager, { spaceId: sprint.spaceId, sprintId: sprint.id });
  }

  private async storedEvents(
    manager: EntityManager,
    keys: readonly string[],
  ): Promise<Map<string, LedgerEvent>> {
    const stored = new Map<string, LedgerEvent>();
    for (const part of chunk(keys, IN_CHUNK)) {
      const rows: Array<Record<string, unknown>> = await query(
        manager,
        `SELECT event_key AS eventKey, space_id AS spaceId, address_key AS addressKey, points, occurred_at AS occurredAt, reason
         FROM points_events WHERE event_key IN (${part.map(() => '?').join(', ')})`,
        part,
      );
      for (const row of rows) {
        stored.set(String(row.eventKey), {
          key: String(row.eventKey),
          spaceId: num(row.spaceId),
          addressKey: String(row.addressKey),
          address: String(row.addressKey),
          points: num(row.points),
          occurredAt: num(row.occurredAt),
          reason: typeof row.reason === 'string' ? row.reason : null,
        });
      }
    }
    return stored;
  }

  /**
   * Applies new events in order and answers the keys it refused (a total out of GraphQL's Int range
   * would make the board unreadable). `optimistic` adds without a locking read (MySQL's gap locks
   * of SELECT ... FOR UPDATE deadlock) and throws TotalOutOfRange after the fact, with no savepoint
   * (SQLite's copies every page it touches); `careful` reads totals first and refuses overflows.
   */
  private async applyEvents(
    manager: EntityManager,
    events: LedgerEvent[],
    rangeCheck: RangeCheck,
  ): Promise<Set<string>> {
    const boardsOf = await this.boardFinder(manager, events);
    if (rangeCheck === 'optimistic') {
      if (await this.addEvents(manager, events, boardsOf, { checkRange: true })) return new Set();
      throw new TotalOutOfRange();
    }
    const totals = await this.readTotals(manager, boardChangesOf(groupByAddress(events), boardsOf));
    const refusedKeys = new Set<string>();
    const acceptedEvents = events.filter((event) => {
      const ids = boardsOf(event).map((sprintId) =>
        entryId(event.spaceId, sprintId, event.addressKey),
      );
      const next = ids.map((id) => (totals.get(id) ?? 0) + event.points);
      if (next.some((total) => total > MAX_TOTAL || total < -MAX_TOTAL)) {
        refusedKeys.add(event.key);
        return false;
      }
      ids.forEach((id, i) => totals.set(id, next[i]));
      return true;
    });
    await this.addEvents(manager, acceptedEvents, boardsOf, { checkRange: false });
    return refusedKeys;
  }

  /**
   * Writes events to the ledger and adds them to their boards' totals, each (board, address) once,
   * in one global lock order. With `checkRange`, answers false (after writing: the transaction
   * must roll back) as soon as some total would have left the range on the way.
   */
  private async addEvents(
    manager: EntityManager,
    events: readonly LedgerEvent[],
    boardsOf: (event: LedgerEvent) => readonly number[],
    { checkRange }: { checkRange: boolean },
  ): Promise<boolean> {
    if (events.length === 0) return true;
    await this.insertEvents(manager, events);
    // The boards' counters are written last: two writers on one board (the address ranges of an
    // import batch, see IngestService) then hold its counter row only from there to their commit.
    const counters: Array<{ board: EntryChange; countChange: number; asReset: boolean }> = [];
    const byAddress = groupByAddress(events);
    for (const board of boardChangesOf(byAddress, boardsOf)) {
      let countChange = 0;
      const asReset =
        board.length > RESET_MIN_CHANGES &&
        announceAsReset(board.length, await this.entryCount(manager, board[0]));
      // A plain board reference, not the first change: stores keep it, and key on its shape.
      const ref = { spaceId: board[0].spaceId, sprintId: board[0].sprintId };
      for (const part of chunk(board, BoardTotalsStore.MAX_CHANGES_PER_ADD)) {
        const stored = await this.totalsStore.add(manager, ref, part, asReset);
        for (let i = 0; i < part.length; i++) {
          const change = part[i];
          const after = stored[i].points;
          const before = after - change.delta;
          if (
            checkRange &&
            (before + change.highest > MAX_TOTAL || before + change.lowest < -MAX_TOTAL)
          )
            return false;
          countChange += (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
        }
        if (!asReset) await appendEntryChanges(manager, stored);
      }
      counters.push({ board: board[0], countChange, asReset });
    }
    await this.profiles.rememberSpellings(manager, firstSpellings(byAddress));
    for (const { board, countChange, asReset } of counters) {
      await this.addToEntryCount(manager, board, countChange);
      await this.totalsStore.boardWritten(manager, board);
      if (asReset) await appendBoardReset(manager, board);
    }
    return true;
  }

  /** For each event, the boards it counts on: all-time and the sprints whose window holds it. */
  private async boardFinder(
    manager: EntityManager,
    events: readonly LedgerEvent[],
  ): Promise<(event: LedgerEvent) => readonly number[]> {
    const sprints = await this.spaces.sprintsOfSpaces(manager, [
      ...new Set(events.map((e) => e.spaceId)),
    ]);
    const bySpace = new Map<number, SprintEntity[]>();
    for (const sprint of sprints) {
      const list = bySpace.get(sprint.spaceId);
      if (list) list.push(sprint);
      else bySpace.set(sprint.spaceId, [sprint]);
    }
    const allTimeOnly = [ALL_TIME_SPRINT_ID] as const;
    return (event) => {
      const candidates = bySpace.get(event.spaceId);
      if (!candidates) return allTimeOnly;
      const boards: number[] = [ALL_TIME_SPRINT_ID];
      for (const sprint of candidates) {
        if (sprint.startTime <= event.occurredAt && event.occurredAt < sprint.endTime)
          boards.push(sprint.id);
      }
      return boards;
    };
  }

  /** In key order, so that concurrent writers of one key queue instead of deadlocking. */
  private async insertEvents(manager: EntityManager, events: readonly LedgerEvent[]) {
    const ordered = [...events].sort((a, b) => compareText(a.key, b.key));
    await insertRows(manager, 'points_events', EVENT_COLUMNS, ordered, (e) => [
      e.key,
      e.spaceId,
      e.addressKey,
      e.points,
      e.occurredAt,
      e.reason,
    ]);
  }

  private async entryCount(
    manager: EntityManager,
    board: { spaceId: number; sprintId: number },
  ): Promise<number> {
    const [row]: Array<Record<string, unknown>> = await query(
      manager,
      'SELECT entry_count AS entryCount FROM boards WHERE space_id = ? AND sprint_id = ?',
      [board.spaceId, board.sprintId],
    );
    return row ? num(row.entryCount) : 0;
  }

  private async addToEntryCount(
    manager: EntityManager,
    board: { spaceId: number; sprintId: number },
    countChange: number,
  ): Promise<void> {
    if (countChange === 0) return;
    await this.writeEntryCount(manager, board.spaceId, board.sprintId, 'add', countChange);
  }

  /** The stored totals of these entries by entry id (locked where writers lock rows). */
  private async readTotals(
    manager: EntityManager,
    boards: readonly EntryChange[][],
  ): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    for (const board of boards) {
      const { spaceId, sprintId } = board[0];
      const stored = await this.totalsStore.totals(
        manager,
        { spaceId, sprintId },
        board.map((change) => change.addressKey),
      );
      for (const [addressKey, points] of stored)
        totals.set(entryId(spaceId, sprintId, addressKey), points);
    }
    return totals;
  }

  /** Sets or adds to a board's entry counter (creating its row). */
  private writeEntryCount(
    manager: EntityManager,
    spaceId: number,
    sprintId: number,
    how: 'set' | 'add',
    value: number,
  ): Promise<unknown> {
    return query(
      manager,
      this.dialect.upsert(
        'boards',
        ['space_id', 'sprint_id', 'entry_count'],
        ['space_id', 'sprint_id'],
        { entry_count: how },
        1,
      ),
      [spaceId, sprintId, value],
    );
  }
}

const EVENT_COLUMNS = ['event_key', 'space_id', 'address_key', 'points', 'occurred_at', 'reason'];

const entryId = (spaceId: number, sprintId: number, addressKey: string) =>
  `${spaceId}\u0000${sprintId}\u0000${addressKey}`;

/**
 * Events by address key, in order, addresses in order of first appearance: the board changes and
 * the profiles of a batch's writes take each address once, not each event.
 */
function groupByAddress(events: readonly LedgerEvent[]): Map<string, LedgerEvent[]> {
  const byAddress = new Map<string, LedgerEvent[]>();
  for (const event of events) {
    const list = byAddress.get(event.addressKey);
    if (list) list.push(event);
    else byAddress.set(event.addressKey, [event]);
  }
  return byAddress;
}

/** Each address key of a batch with its first spelling (see ProfilesService.rememberSpellings). */
function* firstSpellings(
  byAddress: ReadonlyMap<string, readonly LedgerEvent[]>,
): Generator<readonly [string, string]> {
  for (const [key, events] of byAddress) yield [key, events[0].address];
}

/**
 * What events do to each (board, address) they touch: the sum of their points, its highest and
 * lowest running value on the way (for the range check), and the latest event time. Answered by
 * board in one global lock order (boards by space and sprint, addresses by code unit), so writers
 * wait for each other instead of deadlocking; addresses are sorted once, not per board.
 */
function boardChangesOf(
  byAddress: ReadonlyMap<string, readonly LedgerEvent[]>,
  boardsOf: (event: LedgerEvent) => readonly number[],
): EntryChange[][] {
  const boards = new Map<number, Map<number, EntryChange[]>>();
  // The default sort compares code units, as compareText does.
  for (const addressKey of [...byAddress.keys()].sort()) {
    for (const event of byAddress.get(addressKey)!) {
      let ofSpace = boards.get(event.spaceId);
      if (!ofSpace) boards.set(event.spaceId, (ofSpace = new Map<number, EntryChange[]>()));
      for (const sprintId of boardsOf(event)) {
        let board = ofSpace.get(sprintId);
        if (!board) ofSpace.set(sprintId, (board = []));
        // Addresses come one after another: this address's change, if any, is the board's last.
        let change = board[board.length - 1];
        if (change?.addressKey !== addressKey) {
          change = {
            spaceId: event.spaceId,
            sprintId,
            addressKey,
            delta: 0,
            highest: 0,
            lowest: 0,
            reachedAt: event.occurredAt,
          };
          board.push(change);
        }
        change.delta += event.points;
        if (change.delta > change.highest) change.highest = change.delta;
        if (change.delta < change.lowest) change.lowest = change.delta;
        if (event.occurredAt > change.reachedAt) change.reachedAt = event.occurredAt;
      }
    }
  }
  return [...boards.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, ofSpace]) => [...ofSpace.entries()].sort(([a], [b]) => a - b))
    .map(([, board]) => board);
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sameContent(a: LedgerEvent, b: LedgerEvent): boolean {
  return (
    a.spaceId === b.spaceId &&
    a.addressKey === b.addressKey &&
    a.points === b.points &&
    a.occurredAt === b.occurredAt &&
    a.reason === b.reason
  );
}
