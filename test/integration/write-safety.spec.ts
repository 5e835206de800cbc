import type { PointsRecord } from '../../src/records/ingest-record';
import { PointsLedgerService } from '../../src/leaderboards/ledger/points-ledger.service';
import { TransactionRunner } from '../../src/storage/transactions/transaction-runner';
import { bruteForceBoard, PointsFixture } from '../utils/board-model';
import { DB_KINDS } from '../utils/test-databases';
import { GqlResponse, startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const DAY = 86_400_000;
const EPOCH = Date.parse('2026-06-01T00:00:00Z');
const iso = (millis: number) => new Date(millis).toISOString();

const WALK = `query($a: String, $s: Int) { space(id: 1) { loyaltyPointsRanks(cursorAfter: $a, sprintId: $s, first: 1000) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { id } } } } }`;

async function walk(t: TestApp, sprintId?: number): Promise<{ entries: string[]; total: number }> {
  const entries: string[] = [];
  let after: string | null = null;
  let total = 0;
  for (;;) {
    const response: GqlResponse = await t.gql(WALK, { a: after, s: sprintId ?? null });
    const page: any = response.body.data.space.loyaltyPointsRanks;
    total = page.totalCount;
    entries.push(...page.list.map((e: any) => `${e.rank}:${e.address.id}:${e.points}`));
    if (!page.pageInfo.hasNextPage) return { entries, total };
    after = page.pageInfo.endCursor;
  }
}

/** A points record maker for one space and time. */
const pointsIn =
  (spaceId: number, occurredAt: string) => (key: string, address: string, value: number) => ({
    type: 'points',
    key,
    spaceId,
    address,
    points: value,
    occurredAt,
  });

const expected = (events: PointsFixture[], window?: { start: string; end: string }) =>
  bruteForceBoard(events, 1, window).map((e) => `${e.rank}:${e.addressKey}:${e.points}`);

describe.each(DB_KINDS)('writes on %s', (kind) => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp(kind);
    b = await startTestApp(kind, {}, a.db); // a second instance on the same database
    await a.load([{ type: 'space', id: 1, name: 'Busy' }]);
  });
  afterAll(async () => {
    await b?.app.close();
    await a?.close();
  });

  it('keeps every board exact when two instances import at once and a sprint is created mid-way', async () => {
    const events: PointsFixture[] = Array.from({ length: 6000 }, (_, i) => ({
      key: `c-${i}`,
      spaceId: 1,
      address: `0x${(i % 700).toString(16)}`,
      points: (i % 13) - 4,
      occurredAt: iso(EPOCH + (i % 50) * (DAY / 2)),
    }));
    const sprint = {
      type: 'sprint',
      id: 7,
      spaceId: 1,
      name: 'Mid-way',
      startTime: iso(EPOCH + 5 * DAY),
      endTime: iso(EPOCH + 20 * DAY),
    };
    const run = async (t: TestApp, list: PointsFixture[], withSprint: boolean) => {
      for (let i = 0; i < list.length; i += 200) {
        await t.load(list.slice(i, i + 200).map((e) => ({ type: 'points', ...e })));
        if (withSprint && i === 1000) await t.load([sprint]);
      }
    };
    // Overlapping halves: keys 2000-3999 are delivered by both instances.
    await Promise.all([run(a, events.slice(0, 4000), false), run(b, events.slice(2000), true)]);
    const allTime = await walk(a);
    expect(allTime.entries).toEqual(expected(events));
    expect(allTime.total).toBe(allTime.entries.length);
    const sprintBoard = await walk(b, 7);
    expect(sprintBoard.entries).toEqual(
      expected(events, { start: sprint.startTime, end: sprint.endTime }),
    );
    expect(sprintBoard.total).toBe(sprintBoard.entries.length);
  });

  it('never shows a write in progress, and leaves nothing of one that fails', async () => {
    const seenDuring: unknown[] = [];
    await expect(
      a.app.get(TransactionRunner).run(async (manager) => {
        await runSql(manager, 'INSERT INTO spaces (id, name) VALUES (?, ?)', [50, 'Half-written']);
        seenDuring.push((await a.gql('{ space(id: 50) { name } }')).body.data);
        throw new Error('the rest of the batch failed');
      }),
    ).rejects.toThrow('the rest of the batch failed');
    expect(seenDuring).toEqual([{ space: null }]);
    expect((await a.gql('{ space(id: 50) { name } }')).body.data).toEqual({ space: null });
    // The service still writes normally afterwards, on both instances.
    await a.load([{ type: 'space', id: 50, name: 'Whole' }]);
    expect((await b.gql('{ space(id: 50) { name } }')).body.data).toEqual({
      space: { name: 'Whole' },
    });
  });

  it('runs a unit again while each run meets a duplicate key that no run met before', async () => {
    // As when writers that race it commit one after another (for real: ingest.e2e-spec). Two of
    // the keys share the part of a key that MySQL/MariaDB's error shows, and still differ
    // (PostgreSQL's shows the whole key).
    const long = `0x${'c'.repeat(70)}`;
    const taken = ['0xtaken1', '0xtaken2', `${long}1`, `${long}2`];
    for (const key of taken) await a.load([{ type: 'profile', address: key, username: null }]);
    let runs = 0;
    const unit = a.app.get(TransactionRunner).run(async (manager) => {
      const key = taken[runs] ?? '0xfree';
      runs++;
      await runSql(manager, 'INSERT INTO profiles (address_key, address) VALUES (?, ?)', [
        key,
        key,
      ]);
    });
    if (kind === 'sqlite') {
      // One writer: a duplicate key is never a race, and fails at once.
      await expect(unit).rejects.toThrow('UNIQUE constraint failed');
      expect(runs).toBe(1);
    } else {
      await unit;
      expect(runs).toBe(5);
    }
  });

  it('fails a unit that meets the same duplicate key again: a conflict, not a race', async () => {
    let attempts = 0;
    await expect(
      a.app.get(TransactionRunner).run(async (manager) => {
        attempts++;
        await runSql(manager, 'INSERT INTO spaces (id, name) VALUES (?, ?)', [1, 'Again']);
      }),
    ).rejects.toThrow(
      {
        sqlite: 'UNIQUE constraint failed',
        mariadb: 'Duplicate entry',
        postgres: 'duplicate key value violates unique constraint "spaces_pkey"',
      }[kind],
    );
    // The servers run it once more (another writer may have just committed the key); SQLite,
    // with one writer, never meets a race.
    expect(attempts).toBe(kind === 'sqlite' ? 1 : 2);
    expect((await a.gql('{ space(id: 1) { name } }')).body.data).toEqual({
      space: { name: 'Busy' },
    });
  });

  it('adds to the stored totals when another instance or a rolled-back write changed them', async () => {
    // An instance remembers the totals it last wrote (SQLite) and must not trust them: here the
    // other instance adds to the same entries in turn, and a transaction that added is undone.
    const points = pointsIn(60, '2026-01-03T00:00:00Z');
    await a.load([{ type: 'space', id: 60, name: 'Taking turns' }]);
    const events: PointsFixture[] = [];
    const send = async (t: TestApp, round: number) => {
      const records = ['0xTurnA', '0xTurnB', '0xTurnC'].map((address, i) =>
        points(`turn-${round}-${i}`, address, round * 10 + i + 1),
      );
      expect((await t.load(records)).every((o) => o.status === 'accepted')).toBe(true);
      events.push(...records.map((r) => ({ ...r, spaceId: 60 })));
    };
    for (let round = 0; round < 4; round++) await send(round % 2 === 0 ? a : b, round);
    // A transaction that added to 0xTurnA (and so to what instance a remembers), then failed.
    await expect(
      a.app.get(TransactionRunner).run(async (manager) => {
        const undone: PointsRecord = {
          type: 'points',
          key: 'undone',
          spaceId: 60,
          address: '0xTurnA',
          points: 1_000,
          occurredAt: Date.parse('2026-01-03T00:00:00Z'),
        };
        const [outcome] = await a.app
          .get(PointsLedgerService)
          .ingestPoints(manager, [undone], 'optimistic');
        expect(outcome.status).toBe('accepted');
        throw new Error('the rest failed');
      }),
    ).rejects.toThrow('the rest failed');
    await send(a, 4);
    await send(b, 5);
    const board = await a.gql(
      '{ space(id: 60) { loyaltyPointsRanks { list { address { id } points } } } }',
    );
    const totals = bruteForceBoard(events, 60).map((e) => ({
      address: { id: e.addressKey },
      points: e.points,
    }));
    expect(board.body.data.space.loyaltyPointsRanks.list).toEqual(totals);
  });

  it('refuses points that would take a total beyond what GraphQL Int can carry', async () => {
    const points = (key: string, value: number) => ({
      type: 'points',
      key,
      spaceId: 50,
      address: '0xWhale',
      points: value,
      occurredAt: '2026-01-01T00:00:00Z',
    });
    const outcomes = await a.load([
      points('w1', 1_000_000_000),
      points('w2', 1_000_000_000),
      points('w3', 1_000_000_000),
      points('w3', 1_000_000_000),
      points('w4', 5),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'accepted',
      'accepted',
      'refused',
      'refused',
      'accepted',
    ]);
    expect(outcomes[2]).toMatchObject({
      field: 'points',
      reason: expect.stringContaining('2147483647'),
    });
    const board = await a.gql(
      '{ space(id: 50) { loyaltyPointsRanks { totalCount list { rank points } } } }',
    );
    expect(board.body).toEqual({
      data: {
        space: {
          loyaltyPointsRanks: { totalCount: 1, list: [{ rank: 1, points: 2_000_000_005 }] },
        },
      },
    });
  });

  it('refuses a record whose running total overflows mid-batch, though the batch ends in range', async () => {
    const points = pointsIn(50, '2026-01-02T00:00:00Z');
    const before = await a.gql('{ space(id: 50) { loyaltyPointsRanks { totalCount } } }');
    const outcomes = await a.load([
      points('run-1a', '0xRunaway', 1_000_000_000),
      points('run-1b', '0xRunaway', 1_000_000_000),
      points('run-1c', '0xRunaway', 100_000_000),
      points('calm-1', '0xCalm', 7),
      // 2.2e9 on the way: refused, even though the batch as a whole would end at 2.1e9.
      points('run-2', '0xRunaway', 100_000_000),
      points('run-3', '0xRunaway', -100_000_000),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'refused',
      'accepted',
    ]);
    const board = await a.gql(
      `{ space(id: 50) { loyaltyPointsRanks { totalCount list { points address { id } } } } }`,
    );
    const ranks = board.body.data.space.loyaltyPointsRanks;
    expect(ranks.totalCount).toBe(before.body.data.space.loyaltyPointsRanks.totalCount + 2);
    const pointsOf = (id: string) =>
      ranks.list.find((e: { address: { id: string } }) => e.address.id === id)?.points;
    expect(pointsOf('0xrunaway')).toBe(2_000_000_000);
    expect(pointsOf('0xcalm')).toBe(7);
    // The refused record is not in the ledger: delivered again (now in range) it is accepted,
    // not acknowledged as a duplicate.
    const again = await a.load([points('run-2', '0xRunaway', 100_000_000)]);
    expect(again[0].status).toBe('accepted');
  });

  it('runs a batch again, space and sprint records included, when one of its points overflows', async () => {
    const points = pointsIn(51, '2026-03-05T00:00:00Z');
    const batch = [
      { type: 'space', id: 51, name: 'Retried' },
      {
        type: 'sprint',
        id: 510,
        spaceId: 51,
        name: 'March',
        startTime: '2026-03-01T00:00:00Z',
        endTime: '2026-04-01T00:00:00Z',
      },
      points('re-1', '0xBig', 1_000_000_000),
      points('re-1b', '0xBig', 1_000_000_000),
      points('re-2', '0xSmall', 40),
      points('re-3', '0xBig', 200_000_000),
      { type: 'profile', address: '0xSmall', username: 'small' },
      points('re-4', '0xSmall', 2),
    ];
    const outcomes = await a.load(batch);
    expect(outcomes.map((o) => o.status)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'accepted',
      'refused',
      'accepted',
      'accepted',
    ]);
    const query = `{ space(id: 51) {
      name sprints { id name }
      allTime: loyaltyPointsRanks { totalCount list { points address { id username } } }
      march: loyaltyPointsRanks(sprintId: 510) { totalCount list { points address { id } } } } }`;
    const board = await a.gql(query);
    expect(board.body.data.space).toEqual({
      name: 'Retried',
      sprints: [{ id: 510, name: 'March' }],
      allTime: {
        totalCount: 2,
        list: [
          { points: 2_000_000_000, address: { id: '0xbig', username: null } },
          { points: 42, address: { id: '0xsmall', username: 'small' } },
        ],
      },
      march: {
        totalCount: 2,
        list: [
          { points: 2_000_000_000, address: { id: '0xbig' } },
          { points: 42, address: { id: '0xsmall' } },
        ],
      },
    });
    // Delivered again whole: the points are duplicates (the refused one is refused again) and
    // the boards do not move.
    const again = await a.load(batch);
    expect(again.map((o) => o.status)).toEqual([
      'accepted',
      'accepted',
      'duplicate',
      'duplicate',
      'duplicate',
      'refused',
      'accepted',
      'duplicate',
    ]);
    expect((await a.gql(query)).body).toEqual(board.body);
  });

  it('keeps keys distinct by case and refuses keys with surrounding white space', async () => {
    const record = (key: string) => ({
      type: 'points',
      key,
      spaceId: 50,
      address: '0xcase',
      points: 1,
      occurredAt: '2026-01-02T00:00:00Z',
    });
    expect(
      (await a.load([record('Key'), record('key'), record('KEY')])).map((o) => o.status),
    ).toEqual(['accepted', 'accepted', 'accepted']);
    await expect(a.load([record('key ')])).rejects.toThrow(
      'key must not start or end with white space',
    );
    const entry = await a.gql(
      '{ space(id: 50) { addressLoyaltyPoints(address: "0xCASE") { points } } }',
    );
    expect(entry.body.data.space.addressLoyaltyPoints).toEqual({ points: 3 });
  });
});
