import { bruteForceBoard, ExpectedEntry, PointsFixture, seeded } from '../utils/board-model';
import { DB_KINDS } from '../utils/test-databases';
import { RankIndexService } from '../../src/leaderboards/rank-index/rank-index.service';
import { startTestApp, TestApp } from '../utils/test-app';

const DAY = 86_400_000;
const EPOCH = Date.parse('2026-06-01T00:00:00Z');
const iso = (millis: number) => new Date(millis).toISOString();
const ADDRESSES = 11_500;
const SPRINT_A = {
  id: 11,
  spaceId: 1,
  name: 'June',
  startTime: iso(EPOCH + 10 * DAY),
  endTime: iso(EPOCH + 30 * DAY),
};
const SPRINT_B = {
  id: 12,
  spaceId: 1,
  name: 'July',
  startTime: iso(EPOCH + 30 * DAY),
  endTime: iso(EPOCH + 60 * DAY),
};
const OTHER_SPACE_SPRINT = {
  id: 21,
  spaceId: 2,
  name: 'Elsewhere',
  startTime: iso(EPOCH),
  endTime: iso(EPOCH + 60 * DAY),
};

const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}${i % 3 === 0 ? 'Ab' : 'cd'}`;

/** 11,500 addresses, ~29,000 events: points in steps of 10 and whole-hour times, so ties abound. */
function buildEvents(): PointsFixture[] {
  const rand = seeded(7);
  const events: PointsFixture[] = [];
  let n = 0;
  for (let i = 0; i < ADDRESSES; i++) {
    const count = 1 + Math.floor(rand() * 4);
    for (let e = 0; e < count; e++) {
      const spelled = e % 2 === 1 ? address(i).toUpperCase().replace('0X', '0x') : address(i);
      events.push({
        key: `ev-${n++}`,
        spaceId: 1,
        address: spelled,
        points: 10 * (Math.floor(rand() * 30) - 3),
        occurredAt: iso(EPOCH + Math.floor(rand() * 60 * 24) * 3_600_000),
      });
    }
  }
  // Sprint window edges: start is inside, end is outside.
  events.push({
    key: 'edge-start',
    spaceId: 1,
    address: address(1),
    points: 7,
    occurredAt: SPRINT_A.startTime,
  });
  events.push({
    key: 'edge-end',
    spaceId: 1,
    address: address(2),
    points: 9,
    occurredAt: SPRINT_A.endTime,
  });
  // Top of the board: one address first received in mixed case, one with a profile record.
  events.push({
    key: 'top-1',
    spaceId: 1,
    address: '0xFirstSeenMixedCase',
    points: 100_000,
    occurredAt: iso(EPOCH),
  });
  events.push({
    key: 'top-1b',
    spaceId: 1,
    address: '0xfirstseenmixedcase',
    points: 1,
    occurredAt: iso(EPOCH),
  });
  events.push({
    key: 'top-2',
    spaceId: 1,
    address: '0xProfiled',
    points: 90_000,
    occurredAt: iso(EPOCH),
  });
  events.push({
    key: 'other-space',
    spaceId: 2,
    address: address(3),
    points: 50,
    occurredAt: iso(EPOCH + DAY),
  });
  return events;
}

const PAGE = `
  query Page($id: Int!, $after: String, $before: String, $sprintId: Int, $first: Int, $offset: String) {
    space(id: $id) {
      loyaltyPointsRanks(cursorAfter: $after, cursorBefore: $before, sprintId: $sprintId, first: $first, after: $offset) {
        totalCount
        pageInfo { hasNextPage endCursor hasPreviousPage startCursor }
        list { rank points address { id address username } }
        edges { cursor node { rank } }
      }
    }
  }`;

interface Page {
  totalCount: number;
  pageInfo: {
    hasNextPage: boolean;
    endCursor: string | null;
    hasPreviousPage: boolean;
    startCursor: string | null;
  };
  list: Array<{
    rank: number;
    points: number;
    address: { id: string; address: string; username: string | null };
  }>;
  edges: Array<{ cursor: string; node: { rank: number } }>;
}

/*
 * Every spec runs twice per database: pages read with SQL (the rank indexes off), and pages read
 * from the in-process rank indexes, loaded before the first spec. Both must answer the same.
 */
const READERS: Array<{ reader: string; env: Record<string, string> }> = [
  { reader: 'SQL', env: { RANK_INDEX_MAX_ENTRIES: '0' } },
  { reader: 'rank index', env: {} },
];
const CASES = DB_KINDS.flatMap((kind) => READERS.map((r) => [kind, r.reader, r.env] as const));

describe.each(CASES)('leaderboards on %s, pages from %s', (kind, reader, env) => {
  let t: TestApp;
  let events: PointsFixture[];
  let expected: ExpectedEntry[];
  let forward: Array<Page['list'][number] & { cursor: string }>;

  async function page(variables: Record<string, unknown>): Promise<Page> {
    const response = await t.gql<{ space: { loyaltyPointsRanks: Page } }>(PAGE, {
      id: 1,
      ...variables,
    });
    expect(response.body.errors).toBeUndefined();
    return response.body.data.space.loyaltyPointsRanks;
  }

  async function errorOf(query: string, variables: Record<string, unknown>) {
    const response = await t.gql(query, variables);
    expect(response.status).toBe(200);
    expect(response.body.errors).toHaveLength(1);
    return { error: response.body.errors[0], data: response.body.data };
  }

  beforeAll(async () => {
    t = await startTestApp(kind, env);
    events = buildEvents();
    await t.load([
      { type: 'space', id: 1, name: 'Board space' },
      { type: 'space', id: 2, name: 'Other space' },
      { type: 'sprint', ...SPRINT_A },
      { type: 'sprint', ...OTHER_SPACE_SPRINT },
      {
        type: 'profile',
        address: '0xPROFILED',
        username: 'pro',
        avatar: 'https://a.example/p.png',
      },
    ]);
    for (let i = 0; i < events.length; i += 5000) {
      const outcomes = await t.load(
        events.slice(i, i + 5000).map((e) => ({ type: 'points', ...e })),
      );
      expect(outcomes.every((o) => o.status === 'accepted')).toBe(true);
    }
    // Sprint B arrives after its points: its board is built from the ledger.
    await t.load([{ type: 'sprint', ...SPRINT_B }]);
    expected = bruteForceBoard(events, 1);
    expect(expected.length).toBeGreaterThan(10_000);
    if (reader === 'rank index') {
      const indexes = t.app.get(RankIndexService);
      for (const [spaceId, sprintId] of [
        [1, 0],
        [1, SPRINT_A.id],
        [1, SPRINT_B.id],
        [2, 0],
        [2, OTHER_SPACE_SPRINT.id],
      ]) {
        await indexes.warm({ spaceId, sprintId });
      }
      expect(indexes.stats().entries).toBeGreaterThan(expected.length);
    }
  });

  afterAll(() => t?.close());

  it('walks the all-time board with cursorAfter: every entry once, ranks 1..totalCount, in order', async () => {
    forward = [];
    let after: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const p: Page = await page({ after });
      expect(p.totalCount).toBe(expected.length);
      expect(p.list.length).toBeLessThanOrEqual(50);
      p.list.forEach((entry, i) => forward.push({ ...entry, cursor: p.edges[i].cursor }));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(forward.map((e) => [e.rank, e.address.id, e.points])).toEqual(
      expected.map((e) => [e.rank, e.addressKey, e.points]),
    );
  });

  it('walks the same board backwards with cursorBefore and sees the same entries', async () => {
    const last = forward[forward.length - 1];
    const seen: Array<[number, string, number]> = [[last.rank, last.address.id, last.points]];
    let before: string | null = last.cursor;
    for (let pages = 0; pages < 1000 && before; pages++) {
      const p: Page = await page({ before, first: 250 });
      expect(p.totalCount).toBe(expected.length);
      expect(p.pageInfo.hasNextPage).toBe(true);
      seen.unshift(
        ...p.list.map((e): [number, string, number] => [e.rank, e.address.id, e.points]),
      );
      before = p.pageInfo.hasPreviousPage ? p.pageInfo.startCursor : null;
    }
    expect(seen).toEqual(expected.map((e) => [e.rank, e.addressKey, e.points]));
    // Nothing comes before rank 1: an empty page, with nothing after it either.
    const nothingBefore = await page({ before: forward[0].cursor });
    expect(nothingBefore.list).toEqual([]);
    expect(nothingBefore.pageInfo).toEqual({
      hasNextPage: false,
      endCursor: null,
      hasPreviousPage: false,
      startCursor: null,
    });
  });

  it.each([
    ['sprint A (edges: start inside, end outside)', SPRINT_A],
    ['sprint B (created after its points)', SPRINT_B],
  ])('walks %s against a brute-force ranking', async (_name, sprint) => {
    const want = bruteForceBoard(events, 1, { start: sprint.startTime, end: sprint.endTime });
    const got: Array<[number, string, number]> = [];
    let after: string | null = null;
    for (;;) {
      const p: Page = await page({ after, sprintId: sprint.id, first: 1000 });
      expect(p.totalCount).toBe(want.length);
      got.push(...p.list.map((e): [number, string, number] => [e.rank, e.address.id, e.points]));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(got).toEqual(want.map((e) => [e.rank, e.addressKey, e.points]));
  });

  it('serves the root spaceLoyaltyPointsRanks with the same pages', async () => {
    const response = await t.gql(
      `query($after: String) { spaceLoyaltyPointsRanks(spaceId: 1, cursorAfter: $after) {
         totalCount pageInfo { hasNextPage endCursor } list { rank points address { address } } } }`,
      { after: forward[49].cursor },
    );
    const p = response.body.data.spaceLoyaltyPointsRanks;
    expect(p.totalCount).toBe(expected.length);
    expect(p.list.map((e: { rank: number }) => e.rank)).toEqual(
      Array.from({ length: 50 }, (_, i) => 51 + i),
    );
    expect(p.pageInfo.endCursor).toBe(forward[99].cursor);
  });

  it('keeps edges, startCursor and hasPreviousPage consistent with list', async () => {
    const p = await page({ after: forward[9].cursor, first: 5 });
    expect(p.edges.map((e) => e.node.rank)).toEqual(p.list.map((e) => e.rank));
    expect(p.pageInfo.startCursor).toBe(p.edges[0].cursor);
    expect(p.pageInfo.endCursor).toBe(p.edges[4].cursor);
    expect(p.pageInfo.hasPreviousPage).toBe(true);
    expect((await page({})).pageInfo.hasPreviousPage).toBe(false);
  });

  it('honours the deprecated first and after (offset) arguments', async () => {
    expect((await page({ first: 5000 })).list).toHaveLength(1000);
    expect((await page({ offset: '-1', first: 3 })).list.map((e) => e.rank)).toEqual([1, 2, 3]);
    expect((await page({ offset: '99', first: 3 })).list.map((e) => e.rank)).toEqual([
      101, 102, 103,
    ]);
    expect((await page({ offset: forward[4].cursor, first: 2 })).list.map((e) => e.rank)).toEqual([
      6, 7,
    ]);
    // cursorAfter wins over after
    expect((await page({ after: forward[0].cursor, offset: '99', first: 1 })).list[0].rank).toBe(2);
    const past = await page({ offset: String(expected.length + 10) });
    expect(past.list).toEqual([]);
    expect(past.pageInfo).toMatchObject({ hasNextPage: false, endCursor: null, startCursor: null });
    expect(past.totalCount).toBe(expected.length);
  });

  it('answers the spec errors in the envelope, with the board field null', async () => {
    const cursor = forward[10].cursor;
    const sprintCursor = (await page({ sprintId: SPRINT_A.id, first: 1 })).pageInfo.endCursor!;
    const invalid = [
      cursor.slice(0, -3),
      `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`,
      'not-a-cursor',
      sprintCursor, // another board of the same space
    ];
    for (const bad of invalid) {
      const { error, data } = await errorOf(PAGE, { id: 1, after: bad });
      expect(error.message).toBe('Invalid cursor');
      expect(error.extensions).toMatchObject({
        code: 'INVALID_CURSOR',
        category: 'VALIDATION',
        http_status: 200,
      });
      expect(error.extensions.request_id).toEqual(expect.any(String));
      expect(Date.parse(error.extensions.timestamp)).not.toBeNaN();
      expect(data).toEqual({ space: { loyaltyPointsRanks: null } });
    }
    const otherSpaceCursor = (
      await t.gql(`{ space(id: 2) { loyaltyPointsRanks { pageInfo { endCursor } } } }`)
    ).body.data.space.loyaltyPointsRanks.pageInfo.endCursor;
    expect((await errorOf(PAGE, { id: 1, after: otherSpaceCursor })).error.extensions.code).toBe(
      'INVALID_CURSOR',
    );

    for (const sprintId of [OTHER_SPACE_SPRINT.id, 999]) {
      const { error, data } = await errorOf(PAGE, { id: 1, sprintId });
      expect(error).toMatchObject({
        message: 'Invalid sprint ID',
        extensions: { code: 'INVALID_SPRINT_ID' },
      });
      expect(data).toEqual({ space: { loyaltyPointsRanks: null } });
    }
    const missing = await errorOf(PAGE, { id: 404 });
    expect(missing.error).toMatchObject({
      message: 'Space not found',
      extensions: { code: 'SPACE_NOT_FOUND', category: 'NOT_FOUND' },
    });
    expect(missing.data).toEqual({ space: null });
    const rootMissing = await errorOf(
      `{ spaceLoyaltyPointsRanks(spaceId: 404) { totalCount } }`,
      {},
    );
    expect(rootMissing.error.extensions.code).toBe('SPACE_NOT_FOUND');
    expect(rootMissing.data).toEqual({ spaceLoyaltyPointsRanks: null });

    const size = await errorOf(PAGE, { id: 1, first: 0 });
    expect(size.error).toMatchObject({
      message: 'Invalid page size',
      extensions: { code: 'INVALID_ARGUMENT' },
    });
    const both = await errorOf(PAGE, { id: 1, after: cursor, before: cursor });
    expect(both.error.extensions.code).toBe('INVALID_ARGUMENT');
    expect((await page({ after: '', before: '', offset: '' })).list[0].rank).toBe(1);
  });

  it('finds one address with addressLoyaltyPoints, case-insensitively, from the same ranking', async () => {
    const deep = expected[expected.length - 17];
    const query = `query($a: String!, $s: Int) { space(id: 1) { addressLoyaltyPoints(address: $a, sprintId: $s) { rank points address { id } } } }`;
    const found = await t.gql(query, { a: deep.addressKey.toUpperCase().replace('0X', '0x') });
    expect(found.body.data.space.addressLoyaltyPoints).toEqual({
      rank: deep.rank,
      points: deep.points,
      address: { id: deep.addressKey },
    });
    const sprintBoard = bruteForceBoard(events, 1, {
      start: SPRINT_A.startTime,
      end: SPRINT_A.endTime,
    });
    const inSprint = await t.gql(query, { a: sprintBoard[3].addressKey, s: SPRINT_A.id });
    expect(inSprint.body.data.space.addressLoyaltyPoints).toMatchObject({
      rank: 4,
      points: sprintBoard[3].points,
    });
    const absent = await t.gql(query, { a: '0xnobody' });
    expect(absent.body.data.space.addressLoyaltyPoints).toBeNull();
    // An address with points events but a total of 0 or less is not on the board.
    const totals = new Map<string, number>();
    for (const e of events.filter((ev) => ev.spaceId === 1)) {
      const key = e.address.toLowerCase();
      totals.set(key, (totals.get(key) ?? 0) + e.points);
    }
    const below = [...totals].find(([, total]) => total <= 0);
    expect(below).toBeDefined();
    const offBoard = await t.gql(query, { a: below![0] });
    expect(offBoard.body.data.space.addressLoyaltyPoints).toBeNull();
  });

  it('shows an address as first received, with its profile when there is one', () => {
    expect(forward[0]).toMatchObject({
      rank: 1,
      points: 100_001,
      address: { id: '0xfirstseenmixedcase', address: '0xFirstSeenMixedCase', username: null },
    });
    // The profile record came first, so its spelling is the one kept.
    expect(forward[1]).toMatchObject({
      rank: 2,
      address: { id: '0xprofiled', address: '0xPROFILED', username: 'pro' },
    });
  });

  it('loads the profiles of a page in one query and does not count rows for the first page', async () => {
    // Past the 500 ms for which profiles read for pages are reused.
    await new Promise((resolve) => setTimeout(resolve, 600));
    t.recorder.queries.length = 0;
    const p = await page({ first: 50 });
    expect(p.list).toHaveLength(50);
    const profileQueries = t.recorder.queries.filter((q) => /FROM [`"]?profiles[`"]?/i.test(q));
    expect(profileQueries).toHaveLength(1);
    expect(t.recorder.queries.filter((q) => /COUNT\(/i.test(q))).toEqual([]);
  });

  it('keeps cursors valid on a second instance and across a restart', async () => {
    const cursor = forward[199].cursor;
    const ranksAfter = async (app: TestApp) =>
      (
        await app.gql(PAGE, { id: 1, after: cursor, first: 2 })
      ).body.data.space.loyaltyPointsRanks.list.map((e: { rank: number }) => e.rank);
    const second = await startTestApp(kind, {}, t.db);
    expect(await ranksAfter(second)).toEqual([201, 202]);
    await second.app.close();
    await t.app.close();
    // A fresh process on the same database: the secret comes back from the database.
    const restarted = await startTestApp(kind, {}, t.db);
    t = {
      ...restarted,
      close: async () => {
        await restarted.app.close();
        await t.db.drop();
      },
    };
    expect(await ranksAfter(restarted)).toEqual([201, 202]);
  });
});
