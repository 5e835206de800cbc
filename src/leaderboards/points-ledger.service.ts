import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { addressKeyOf } from '../common/address-key';
import type { PointsRecord } from '../ingest/ingest-record';
import { RecordOutcome, accepted, duplicate, refused } from '../ingest/record-outcome';
import { ProfilesService } from '../profiles/profiles.service';
import type { SprintEntity } from '../spaces/sprint.entity';
import { SpacesService } from '../spaces/spaces.service';
import { chunk, dialectOf, num, upsertSql } from '../storage/sql-dialect';
import { ALL_TIME_SPRINT_ID } from './ranking';

interface LedgerEvent {
  key: string;
  spaceId: number;
  addressKey: string;
  address: string;
  points: number;
  occurredAt: number;
}

interface BoardDelta {
  spaceId: number;
  sprintId: number;
  addressKey: string;
  points: number;
  latest: number;
}

const IN_CHUNK = 500;

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
    const known = await this.spaces.existingSpaceIds(manager, [
      ...new Set(records.map((r) => r.spaceId)),
    ]);
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
    if (fresh.length > 0) await this.applyEvents(manager, fresh);
    return outcomes;
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

  private async applyEvents(manager: EntityManager, events: LedgerEvent[]): Promise<void> {
    const dialect = dialectOf(manager);
    const columns = ['event_key', 'space_id', 'address_key', 'points', 'occurred_at'];
    for (const part of chunk(events, IN_CHUNK)) {
      await manager.query(
        `INSERT INTO points_events (${columns.join(', ')}) VALUES ${part.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
        part.flatMap((e) => [e.key, e.spaceId, e.addressKey, e.points, e.occurredAt]),
      );
    }
    await this.profiles.rememberAddresses(
      manager,
      events.map((e) => e.address),
    );

    const sprints = await this.spaces.sprintsOfSpaces(manager, [
      ...new Set(events.map((e) => e.spaceId)),
    ]);
    const deltas = new Map<string, BoardDelta>();
    const add = (event: LedgerEvent, sprintId: number) => {
      const id = `${event.spaceId}\u0000${sprintId}\u0000${event.addressKey}`;
      const delta = deltas.get(id);
      if (delta) {
        delta.points += event.points;
        delta.latest = Math.max(delta.latest, event.occurredAt);
      } else {
        deltas.set(id, {
          spaceId: event.spaceId,
          sprintId,
          addressKey: event.addressKey,
          points: event.points,
          latest: event.occurredAt,
        });
      }
    };
    for (const event of events) {
      add(event, ALL_TIME_SPRINT_ID);
      for (const sprint of sprints) {
        if (
          sprint.spaceId === event.spaceId &&
          sprint.startTime <= event.occurredAt &&
          event.occurredAt < sprint.endTime
        ) {
          add(event, sprint.id);
        }
      }
    }
    const byBoard = new Map<string, BoardDelta[]>();
    for (const delta of deltas.values()) {
      const board = `${delta.spaceId}:${delta.sprintId}`;
      byBoard.set(board, [...(byBoard.get(board) ?? []), delta]);
    }
    for (const boardDeltas of byBoard.values()) {
      for (const part of chunk(boardDeltas, IN_CHUNK))
        await this.applyBoardDeltas(manager, dialect, part);
    }
  }

  /** Deltas of one board: read the running totals (locked on MySQL), write the new ones. */
  private async applyBoardDeltas(
    manager: EntityManager,
    dialect: ReturnType<typeof dialectOf>,
    deltas: BoardDelta[],
  ): Promise<void> {
    const { spaceId, sprintId } = deltas[0];
    const rows: Array<Record<string, unknown>> = await manager.query(
      `SELECT address_key AS addressKey, points, reached_at AS reachedAt FROM board_entries
       WHERE space_id = ? AND sprint_id = ? AND address_key IN (${deltas.map(() => '?').join(', ')})
       ${dialect === 'mysql' ? 'FOR UPDATE' : ''}`,
      [spaceId, sprintId, ...deltas.map((d) => d.addressKey)],
    );
    const current = new Map(
      rows.map((row) => [
        String(row.addressKey),
        { points: num(row.points), reachedAt: num(row.reachedAt) },
      ]),
    );
    let countChange = 0;
    const values: unknown[] = [];
    for (const delta of deltas) {
      const before = current.get(delta.addressKey);
      const points = (before?.points ?? 0) + delta.points;
      const reachedAt = Math.max(before?.reachedAt ?? delta.latest, delta.latest);
      countChange += (points > 0 ? 1 : 0) - ((before?.points ?? 0) > 0 ? 1 : 0);
      values.push(spaceId, sprintId, delta.addressKey, points, reachedAt);
    }
    await manager.query(
      upsertSql(
        dialect,
        'board_entries',
        ['space_id', 'sprint_id', 'address_key', 'points', 'reached_at'],
        ['space_id', 'sprint_id', 'address_key'],
        { points: 'set', reached_at: 'set' },
        deltas.length,
      ),
      values,
    );
    await manager.query(
      upsertSql(
        dialect,
        'boards',
        ['space_id', 'sprint_id', 'entry_count'],
        ['space_id', 'sprint_id'],
        { entry_count: 'add' },
        1,
      ),
      [spaceId, sprintId, countChange],
    );
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
