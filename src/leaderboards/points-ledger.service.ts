import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { addressKeyOf } from '../common/address-key';
import type { PointsRecord } from '../ingest/ingest-record';
import { RecordOutcome, accepted, duplicate, refused } from '../ingest/record-outcome';
import { ProfilesService } from '../profiles/profiles.service';
import type { SprintEntity } from '../spaces/sprint.entity';
import { SpacesService } from '../spaces/spaces.service';
import { chunk, Dialect, dialectOf, num, upsertSql } from '../storage/sql-dialect';
import { ALL_TIME_SPRINT_ID } from './ranking';

interface LedgerEvent {
  key: string;
  spaceId: number;
  addressKey: string;
  address: string;
  points: number;
  occurredAt: number;
}

interface EntryTotal {
  spaceId: number;
  sprintId: number;
  addressKey: string;
  points: number;
  reachedAt: number;
}

const IN_CHUNK = 500;
/** Board totals are served as GraphQL Int (32-bit signed). */
const MAX_TOTAL = 2_147_483_647;
const OVERFLOW_REASON =
  'would take the total of this address beyond 2147483647 (or below -2147483647)';

const pairId = (spaceId: number, sprintId: number, addressKey: string) =>
  `${spaceId}\u0000${sprintId}\u0000${addressKey}`;

/**
 * Applies points to the ledger and to every board they count on (all-time, and each sprint whose
 * window holds the event), inside the caller's transaction. A key is applied once: the same key
 * with the same content again is a duplicate that changes nothing; with other content, a refusal.
 */
@Injectable()
export class PointsLedgerService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly profiles: ProfilesService,
  ) {}

  async ingestPoints(
    manager: EntityManager,
    records: readonly PointsRecord[],
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
      const event: LedgerEvent = { ...record, addressKey: addressKeyOf(record.address) };
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
    const overflowing = await this.applyEvents(manager, fresh);
    // A refused record refuses the later copies of its key in the same batch too.
    return records.map((record, i) =>
      overflowing.has(record.key) && outcomes[i].status !== 'refused'
        ? refused('points', OVERFLOW_REASON)
        : outcomes[i],
    );
  }

  /** Recomputes a sprint's board from the ledger: for a new sprint or one whose window moved. */
  async rebuildSprintBoard(manager: EntityManager, sprint: SprintEntity): Promise<void> {
    const board = [sprint.spaceId, sprint.id];
    await manager.query('DELETE FROM board_entries WHERE space_id = ? AND sprint_id = ?', board);
    await manager.query(
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
       SELECT space_id, ?, address_key, SUM(points), MAX(occurred_at) FROM points_events
       WHERE space_id = ? AND occurred_at >= ? AND occurred_at < ?
       GROUP BY space_id, address_key`,
      [sprint.id, sprint.spaceId, sprint.startTime, sprint.endTime],
    );
    const [row]: Array<Record<string, unknown>> = await manager.query(
      'SELECT COUNT(*) AS entries FROM board_entries WHERE space_id = ? AND sprint_id = ? AND points > 0',
      board,
    );
    await manager.query(
      upsertSql(
        dialectOf(manager),
        'boards',
        ['space_id', 'sprint_id', 'entry_count'],
        ['space_id', 'sprint_id'],
        { entry_count: 'set' },
        1,
      ),
      [...board, num(row.entries)],
    );
  }

  private async storedEvents(
    manager: EntityManager,
    keys: readonly string[],
  ): Promise<Map<string, LedgerEvent>> {
    const stored = new Map<string, LedgerEvent>();
    for (const part of chunk(keys, IN_CHUNK)) {
      const rows: Array<Record<string, unknown>> = await manager.query(
        `SELECT event_key AS eventKey, space_id AS spaceId, address_key AS addressKey, points, occurred_at AS occurredAt
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
        });
      }
    }
    return stored;
  }

  /**
   * Applies new events in order and answers the keys it refused: an event that would take a total
   * out of GraphQL's Int range, which would make the whole board unreadable.
   */
  private async applyEvents(manager: EntityManager, events: LedgerEvent[]): Promise<Set<string>> {
    const dialect = dialectOf(manager);
    const sprints = await this.spaces.sprintsOfSpaces(manager, [
      ...new Set(events.map((e) => e.spaceId)),
    ]);
    const boardsOf = (event: LedgerEvent): number[] => [
      ALL_TIME_SPRINT_ID,
      ...sprints
        .filter(
          (s) =>
            s.spaceId === event.spaceId &&
            s.startTime <= event.occurredAt &&
            event.occurredAt < s.endTime,
        )
        .map((s) => s.id),
    ];
    const before = await this.readTotals(manager, dialect, events, boardsOf);
    const after = new Map<string, EntryTotal>();
    const refusedKeys = new Set<string>();
    const acceptedEvents: LedgerEvent[] = [];
    for (const event of events) {
      const next = boardsOf(event).map((sprintId) => {
        const id = pairId(event.spaceId, sprintId, event.addressKey);
        const current = after.get(id) ?? before.get(id);
        return {
          id,
          total: {
            spaceId: event.spaceId,
            sprintId,
            addressKey: event.addressKey,
            points: (current?.points ?? 0) + event.points,
            reachedAt: Math.max(current?.reachedAt ?? event.occurredAt, event.occurredAt),
          },
        };
      });
      if (next.some(({ total }) => total.points > MAX_TOTAL || total.points < -MAX_TOTAL)) {
        refusedKeys.add(event.key);
        continue;
      }
      for (const { id, total } of next) after.set(id, total);
      acceptedEvents.push(event);
    }

    const columns = ['event_key', 'space_id', 'address_key', 'points', 'occurred_at'];
    for (const part of chunk(acceptedEvents, IN_CHUNK)) {
      await manager.query(
        `INSERT INTO points_events (${columns.join(', ')}) VALUES ${part.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
        part.flatMap((e) => [e.key, e.spaceId, e.addressKey, e.points, e.occurredAt]),
      );
    }
    await this.profiles.rememberAddresses(
      manager,
      acceptedEvents.map((e) => e.address),
    );

    const byBoard = new Map<string, EntryTotal[]>();
    for (const total of after.values()) {
      const board = `${total.spaceId}:${total.sprintId}`;
      byBoard.set(board, [...(byBoard.get(board) ?? []), total]);
    }
    for (const totals of byBoard.values()) {
      let countChange = 0;
      for (const total of totals) {
        const previous =
          before.get(pairId(total.spaceId, total.sprintId, total.addressKey))?.points ?? 0;
        countChange += (total.points > 0 ? 1 : 0) - (previous > 0 ? 1 : 0);
      }
      for (const part of chunk(totals, IN_CHUNK)) {
        await manager.query(
          upsertSql(
            dialect,
            'board_entries',
            ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at'],
            ['space_id', 'sprint_id', 'address_key'],
            { points: 'set', reached_at: 'set' },
            part.length,
          ),
          part.flatMap((t) => [t.spaceId, t.sprintId, t.addressKey, t.points, t.reachedAt]),
        );
      }
      if (countChange !== 0) {
        await manager.query(
          upsertSql(
            dialect,
            'boards',
            ['space_id', 'sprint_id', 'entry_count'],
            ['space_id', 'sprint_id'],
            { entry_count: 'add' },
            1,
          ),
          [totals[0].spaceId, totals[0].sprintId, countChange],
        );
      }
    }
    return refusedKeys;
  }

  /** The running totals the events touch, locked on MySQL until the transaction ends. */
  private async readTotals(
    manager: EntityManager,
    dialect: Dialect,
    events: readonly LedgerEvent[],
    boardsOf: (event: LedgerEvent) => number[],
  ): Promise<Map<string, EntryTotal>> {
    const wanted = new Map<string, { spaceId: number; sprintId: number; keys: Set<string> }>();
    for (const event of events) {
      for (const sprintId of boardsOf(event)) {
        const board = `${event.spaceId}:${sprintId}`;
        const entry = wanted.get(board) ?? {
          spaceId: event.spaceId,
          sprintId,
          keys: new Set<string>(),
        };
        entry.keys.add(event.addressKey);
        wanted.set(board, entry);
      }
    }
    const totals = new Map<string, EntryTotal>();
    for (const { spaceId, sprintId, keys } of wanted.values()) {
      for (const part of chunk([...keys], IN_CHUNK)) {
        const rows: Array<Record<string, unknown>> = await manager.query(
          `SELECT address_key AS addressKey, points, reached_at AS reachedAt FROM board_entries
           WHERE space_id = ? AND sprint_id = ? AND address_key IN (${part.map(() => '?').join(', ')})
           ${dialect === 'mysql' ? 'FOR UPDATE' : ''}`,
          [spaceId, sprintId, ...part],
        );
        for (const row of rows) {
          const addressKey = String(row.addressKey);
          totals.set(pairId(spaceId, sprintId, addressKey), {
            spaceId,
            sprintId,
            addressKey,
            points: num(row.points),
            reachedAt: num(row.reachedAt),
          });
        }
      }
    }
    return totals;
  }
}

function sameContent(a: LedgerEvent, b: LedgerEvent): boolean {
  return (
    a.spaceId === b.spaceId &&
    a.addressKey === b.addressKey &&
    a.points === b.points &&
    a.occurredAt === b.occurredAt
  );
}
