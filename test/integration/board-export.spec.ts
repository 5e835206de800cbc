import { setTimeout as sleep } from 'node:timers/promises';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { BoardExportService } from '../../src/export/board-export.service';
import { IngestService } from '../../src/ingest/ingest.service';
import { parseRecord } from '../../src/records/ingest-record';
import { SpacesService } from '../../src/spaces/spaces.service';
import { ReadSnapshots } from '../../src/storage/snapshot/read-snapshot';
import { bruteForceBoard, PointsFixture, seeded } from '../utils/board-model';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const SPACE = 1;
const OTHER_SPACE = 2;
const PRIVATE_SPACE = 3;
const SPRINT = 11;
const DAY = 86_400_000;

/** A row of the NDJSON export. */
interface Row {
  rank: number;
  address: string;
  username: string | null;
  points: number;
}

/** `rank:addressKey:points`, the way a user compares two boards. */
const line = (e: { rank: number; addressKey?: string; address?: string; points: number }) =>
  `${e.rank}:${(e.addressKey ?? e.address ?? '').toLowerCase()}:${e.points}`;

function points(rand: () => number, count: number, prefix: string, day0 = 0): PointsFixture[] {
  return Array.from({ length: count }, (_, i) => ({
    key: `${prefix}${i}`,
    spaceId: SPACE,
    address: `0xE${(i % 4000).toString(16).padStart(5, '0')}Ab`,
    // Few distinct totals: many ties, ordered by when they were reached, then by address.
    points: 1 + Math.floor(rand() * 40),
    occurredAt: new Date(Date.UTC(2026, 0, 1) + ((day0 + i) % 50) * DAY).toISOString(),
  }));
}

describe.each(DB_KINDS)('GET /export on %s', (kind) => {
  let t: TestApp;
  let exportUrl: string;
  let events: PointsFixture[];

  const get = (query: string, token: string | null = t.token, init: RequestInit = {}) =>
    fetch(`${exportUrl}${query}`, {
      ...init,
      headers: token === null ? {} : { 'access-token': token },
    });

  async function ndjson(query: string): Promise<{ response: Response; rows: Row[] }> {
    const response = await get(`${query}&format=ndjson`);
    const text = await response.text();
    const rows = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);
    return { response, rows };
  }

  beforeAll(async () => {
    t = await startTestApp(kind);
    exportUrl = t.url.replace(/\/query$/, '/export');
    events = points(seeded(29), 5000, 'p'); // 4,000 addresses, most of them twice
    await t.load([
      { type: 'space', id: SPACE, name: 'Export space' },
      { type: 'space', id: OTHER_SPACE, name: 'Other space' },
      { type: 'space', id: PRIVATE_SPACE, name: 'Private space' },
      {
        type: 'sprint',
        id: SPRINT,
        spaceId: SPACE,
        name: 'January',
        startTime: '2026-01-01T00:00:00.000Z',
        endTime: '2026-01-21T00:00:00.000Z',
      },
      { type: 'profile', address: '0xE00001Ab', username: 'first, "quoted"' },
      { type: 'profile', address: '0xE00002Ab', username: '=cmd()' },
      ...events.map((e) => ({ type: 'points', ...e })),
    ]);
  }, 120_000);

  afterAll(() => t?.close());

  it('streams the whole all-time board as NDJSON: every address once, ranks 1..N, with N and the moment', async () => {
    const before = Date.now();
    const { response, rows } = await ndjson(`?spaceId=${SPACE}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    expect(response.headers.get('content-disposition')).toBe(
      'attachment; filename="space-1-all-time.ndjson"',
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const expected = bruteForceBoard(events, SPACE);
    expect(Number(response.headers.get('x-board-entries'))).toBe(expected.length);
    const asOf = Date.parse(response.headers.get('x-board-as-of') ?? '');
    expect(asOf).toBeGreaterThanOrEqual(before - 5);
    expect(asOf).toBeLessThanOrEqual(Date.now());
    expect(rows.map(line)).toEqual(expected.map(line));
    expect(rows.find((r) => r.address === '0xE00001Ab')?.username).toBe('first, "quoted"');
    expect(rows.find((r) => r.address === '0xE00003Ab')?.username).toBeNull();
  });

  it('streams CSV by default, quoted as the CLI writes it, and one sprint on its own', async () => {
    const csv = await get(`?spaceId=${SPACE}`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await csv.text()).split('\n');
    expect(lines[0]).toBe('rank,address,username,points');
    expect(lines.at(-1)).toBe('');
    expect(lines).toContainEqual(expect.stringMatching(/^\d+,0xE00001Ab,"first, ""quoted""",\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^\d+,0xE00002Ab,'=cmd\(\),\d+$/));
    expect(lines.length - 2).toBe(Number(csv.headers.get('x-board-entries')));

    const { response, rows } = await ndjson(`?spaceId=${SPACE}&sprintId=${SPRINT}`);
    expect(response.headers.get('content-disposition')).toContain('space-1-sprint-11.ndjson');
    const window = { start: '2026-01-01T00:00:00.000Z', end: '2026-01-21T00:00:00.000Z' };
    expect(rows.map(line)).toEqual(bruteForceBoard(events, SPACE, window).map(line));
  });

  it('answers an empty board with its header alone and N = 0', async () => {
    const csv = await get(`?spaceId=${OTHER_SPACE}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('x-board-entries')).toBe('0');
    expect(await csv.text()).toBe('rank,address,username,points\n');
  });

  it('reads one moment: writes committed while an export is open are not in it, and are not blocked', async () => {
    const exports = t.app.get(BoardExportService);
    const ingest = t.app.get(IngestService);
    const board = await exports.open(SPACE, null, null);
    const before = bruteForceBoard(events, SPACE);
    expect(board.entries).toBe(before.length);
    // Moves across pages of the export: the last entry to the top, the top one off the board,
    // and a new address in the middle.
    const last = before[before.length - 1];
    const top = before[0];
    const moves: PointsFixture[] = [
      {
        key: 'm1',
        spaceId: SPACE,
        address: last.addressKey,
        points: 500,
        occurredAt: '2026-03-01T00:00:00.000Z',
      },
      {
        key: 'm2',
        spaceId: SPACE,
        address: top.addressKey,
        points: -top.points,
        occurredAt: '2026-03-01T00:00:00.000Z',
      },
      {
        key: 'm3',
        spaceId: SPACE,
        address: '0xNEWCOMER',
        points: 20,
        occurredAt: '2026-03-01T00:00:00.000Z',
      },
    ];
    const started = Date.now();
    const outcomes = await ingest.applyRecords(
      moves.map((m) => {
        const parsed = parseRecord({ type: 'points', ...m });
        if (!parsed.ok) throw new Error(parsed.reason);
        return parsed.record;
      }),
    );
    // A writer is not held up by the open snapshot (a lock would hold it until the export ends).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcomes.map((o) => o.status)).toEqual(['accepted', 'accepted', 'accepted']);
    const live = await t.gql(
      `{ space(id: ${SPACE}) { loyaltyPointsRanks(first: 1) { list { address { address } } } } }`,
    );
    expect(live.body.data.space.loyaltyPointsRanks.list[0].address.address.toLowerCase()).toBe(
      last.addressKey,
    );

    const rows: string[] = [];
    for await (const page of board.pages()) rows.push(...page.map((r) => line(r)));
    expect(rows).toEqual(before.map(line));
    expect(exports.inProgress).toBe(0);

    events.push(...moves);
    const { rows: after } = await ndjson(`?spaceId=${SPACE}`);
    expect(after.map(line)).toEqual(bruteForceBoard(events, SPACE).map(line));
  });

  describe('refusals, in the error envelope before any body', () => {
    const envelope = async (response: Response) => {
      const body = (await response.json()) as {
        errors: Array<{ message: string; extensions: Record<string, unknown> }>;
      };
      return { status: response.status, ...body.errors[0], ...body.errors[0].extensions };
    };

    it.each([
      ['', 'spaceId is required'],
      ['?spaceId=abc', 'spaceId must be a whole number from 1 to 2147483647'],
      ['?spaceId=0', 'spaceId must be a whole number'],
      ['?spaceId=99999999999', 'spaceId must be a whole number'],
      ['?spaceId=1&spaceId=2', 'spaceId must be given once'],
      ['?spaceId=1&sprintId=-3', 'sprintId must be a whole number'],
      ['?spaceId=1&format=xml', 'format must be csv or ndjson'],
      [
        '?spaceId=1&first=10',
        'Unknown parameter "first": the parameters are spaceId, sprintId, format',
      ],
    ])('%s is INVALID_ARGUMENT: %s', async (query, message) => {
      expect(await envelope(await get(query))).toMatchObject({
        status: 400,
        code: 'INVALID_ARGUMENT',
        http_status: 400,
        message: expect.stringContaining(message),
      });
    });

    it('refuses a missing token, a bad one and one without the query scope', async () => {
      expect(await envelope(await get(`?spaceId=${SPACE}`, null))).toMatchObject({
        status: 401,
        code: 'TOKEN_REQUIRED',
      });
      expect(await envelope(await get(`?spaceId=${SPACE}`, 'lpt_nope'))).toMatchObject({
        status: 401,
        code: 'INVALID_TOKEN',
      });
      const { token } = await t.app.get(AccessTokensService).create('ingest only', ['ingest']);
      expect(await envelope(await get(`?spaceId=${SPACE}`, token))).toMatchObject({
        status: 403,
        code: 'INSUFFICIENT_SCOPE',
      });
    });

    it('answers an unknown space, a private one and a sprint of another space as /query does', async () => {
      expect(await envelope(await get('?spaceId=404'))).toMatchObject({
        status: 404,
        code: 'SPACE_NOT_FOUND',
        http_status: 404,
        message: 'Space not found',
      });
      expect(await envelope(await get(`?spaceId=${OTHER_SPACE}&sprintId=${SPRINT}`))).toMatchObject(
        {
          status: 400,
          code: 'INVALID_SPRINT_ID',
          message: 'Invalid sprint ID',
        },
      );
      const tokens = t.app.get(AccessTokensService);
      await t.app.get(SpacesService).setPrivate(PRIVATE_SPACE, true);
      const { token: otherTeam } = await tokens.create('other team', ['query'], {
        spaceId: OTHER_SPACE,
      });
      const { token: ownTeam } = await tokens.create('own team', ['query'], {
        spaceId: PRIVATE_SPACE,
      });
      const hidden = await envelope(await get(`?spaceId=${PRIVATE_SPACE}`, otherTeam));
      const unknown = await envelope(await get('?spaceId=404', otherTeam));
      expect(hidden).toMatchObject({ status: 404, code: 'SPACE_NOT_FOUND' });
      expect(hidden.message).toBe(unknown.message);
      expect((await get(`?spaceId=${PRIVATE_SPACE}`, ownTeam)).status).toBe(200);
    });

    it('answers other methods with 405', async () => {
      const response = await fetch(`${exportUrl}?spaceId=${SPACE}`, {
        method: 'POST',
        headers: { 'access-token': t.token },
      });
      expect(await envelope(response)).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    });
  });
});

describe.each(DB_KINDS)('a large board exported on %s', (kind) => {
  let t: TestApp;
  let exportUrl: string;
  let events: PointsFixture[];

  beforeAll(async () => {
    t = await startTestApp(kind, {
      RATE_LIMIT_INGEST: 'off',
      RATE_LIMIT_EXPORT: '7/1m',
      EXPORT_MAX_CONCURRENT: '1',
      RATE_LIMIT_TOKEN: 'off',
      // Pages read with SQL: on SQLite each one folds the writes into board_entries first, so the
      // rows an export reads change under it unless it reads one snapshot.
      RANK_INDEX_MAX_ENTRIES: '0',
    });
    exportUrl = t.url.replace(/\/query$/, '/export');
    const rand = seeded(5);
    events = Array.from({ length: 30_000 }, (_, i) => ({
      key: `b${i}`,
      spaceId: SPACE,
      address: `0xB${i.toString(16).padStart(6, '0')}`,
      points: 1 + Math.floor(rand() * 1000),
      occurredAt: new Date(Date.UTC(2026, 0, 1) + (i % 20) * DAY).toISOString(),
    }));
    await t.load([
      { type: 'space', id: SPACE, name: 'Big' },
      ...events.map((e) => ({ type: 'points', ...e })),
    ]);
  }, 120_000);

  afterAll(() => t?.close());

  it('is consistent while a writer sends batches at full speed: the board as of one acknowledged batch', async () => {
    const rand = seeded(71);
    const addresses = bruteForceBoard(events, SPACE).map((e) => e.addressKey);
    const { token: ingestToken } = await t.app
      .get(AccessTokensService)
      .create('writer', ['ingest']);
    const batches: PointsFixture[][] = [];
    const acked: number[] = []; // when each batch was acknowledged (ms)
    let writing = true;
    const writer = (async () => {
      for (let b = 0; writing && b < 5000; b++) {
        const batch = Array.from({ length: 20 }, (_, i) => ({
          key: `w${b}-${i}`,
          spaceId: SPACE,
          // Mostly addresses of the board, some new, some losing points: entries move both ways.
          address: rand() < 0.9 ? addresses[Math.floor(rand() * addresses.length)] : `0xW${b}x${i}`,
          points: Math.floor(rand() * 600) - 150,
          occurredAt: new Date(Date.UTC(2026, 2, 1) + b * 1000 + i).toISOString(),
        }));
        batches.push(batch);
        const response = await fetch(t.url.replace(/\/query$/, '/ingest'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': ingestToken },
          body: JSON.stringify(batch.map((e) => ({ type: 'points', ...e }))),
        });
        const body = (await response.json()) as { accepted: number };
        if (response.status !== 200 || body.accepted !== 20)
          throw new Error(`batch ${b}: ${response.status} ${JSON.stringify(body)}`);
        acked.push(performance.now());
      }
    })();
    const reading = (async () => {
      while (writing) {
        const page = await t.gql(
          `{ space(id: ${SPACE}) { loyaltyPointsRanks(first: 1) { totalCount } } }`,
        );
        if (page.status !== 200) throw new Error(`page: ${JSON.stringify(page.body)}`);
        await sleep(5);
      }
    })();
    await sleep(300);

    const sentAt = performance.now();
    const ackedBeforeRequest = acked.filter((at) => at <= sentAt).length;
    const response = await fetch(`${exportUrl}?spaceId=${SPACE}&format=ndjson`, {
      headers: { 'access-token': t.token },
    });
    const sentBeforeHeaders = batches.length; // nothing sent later can be in the snapshot
    const headersAt = performance.now();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      await sleep(10); // a slow client: the snapshot stays open while batches commit
    }
    const endedAt = performance.now();
    writing = false;
    await Promise.all([writer, reading]);
    expect(acked.filter((at) => at > headersAt && at < endedAt).length).toBeGreaterThan(0);

    const rows = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);
    expect(rows.length).toBe(Number(response.headers.get('x-board-entries')));
    expect(rows.map((r) => r.rank)).toEqual(rows.map((_, i) => i + 1));
    expect(new Set(rows.map((r) => r.address.toLowerCase())).size).toBe(rows.length);
    // The ledger as of the export's moment: the fixture and the first k batches, for one k among
    // those that may have been committed when the snapshot was taken.
    const exported = rows.map(line).join('\n');
    let matched: number | undefined;
    for (let k = ackedBeforeRequest; k <= sentBeforeHeaders && matched === undefined; k++) {
      const expected = bruteForceBoard([...events, ...batches.slice(0, k).flat()], SPACE);
      if (expected.map(line).join('\n') === exported) matched = k;
    }
    expect(matched).toBeDefined();
    events.push(...batches.flat());
  }, 120_000);

  it('exports while four writers keep every commit busy: no refusal, each export whole', async () => {
    const rand = seeded(97);
    const { token: ingestToken } = await t.app
      .get(AccessTokensService)
      .create('writers', ['ingest']);
    let writing = true;
    let written = 0;
    const writer = async (w: number) => {
      for (let b = 0; writing; b++) {
        const batch = Array.from({ length: 50 }, (_, i) => ({
          type: 'points',
          key: `busy${w}-${b}-${i}`,
          spaceId: SPACE,
          address: `0xB${Math.floor(rand() * 30_000)
            .toString(16)
            .padStart(6, '0')}`,
          points: 1 + Math.floor(rand() * 10),
          occurredAt: '2026-04-01T00:00:00.000Z',
        }));
        const response = await fetch(t.url.replace(/\/query$/, '/ingest'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': ingestToken },
          body: JSON.stringify(batch),
        });
        if (response.status !== 200) throw new Error(`writer ${w}: ${response.status}`);
        await response.arrayBuffer();
        written++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await sleep(200);
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${exportUrl}?spaceId=${SPACE}&format=ndjson`, {
        headers: { 'access-token': t.token },
      });
      const body = await response.text();
      expect({ status: response.status, body: response.status === 200 ? '' : body }).toEqual({
        status: 200,
        body: '',
      });
      const ranks = body
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as Row).rank);
      expect(ranks.length).toBe(Number(response.headers.get('x-board-entries')));
      expect(ranks.every((rank, index) => rank === index + 1)).toBe(true);
    }
    writing = false;
    await Promise.all(writers);
    expect(written).toBeGreaterThan(10);
  }, 120_000);

  it('runs one export at a time here, ends one whose client goes away, and counts exports on their own budget', async () => {
    const exports = t.app.get(BoardExportService);
    const held = await exports.open(SPACE, null, null);
    expect(exports.inProgress).toBe(1);
    const busy = await fetch(`${exportUrl}?spaceId=${SPACE}`, {
      headers: { 'access-token': t.token },
    });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('5');
    expect(((await busy.json()) as any).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    await held.close();
    expect(exports.inProgress).toBe(0);

    // Each page read is slowed down, so that the export is still reading when its client goes.
    const snapshots = t.app.get(ReadSnapshots);
    const open = snapshots.open.bind(snapshots);
    let pagesRead = 0;
    const spy = jest.spyOn(snapshots, 'open').mockImplementation(async () => {
      const snapshot = await open();
      return {
        ...snapshot,
        takenAt: snapshot.takenAt,
        all: async (sql: string, params: readonly unknown[]) => {
          pagesRead++;
          await sleep(25);
          return snapshot.all(sql, params);
        },
        release: () => snapshot.release(),
      };
    });
    try {
      const controller = new AbortController();
      const first = await fetch(`${exportUrl}?spaceId=${SPACE}`, {
        headers: { 'access-token': t.token },
        signal: controller.signal,
      });
      expect(first.status).toBe(200);
      await first.body!.getReader().read(); // the body has begun; then the client goes away
      controller.abort();
      for (let i = 0; i < 50 && exports.inProgress > 0; i++) await sleep(20);
      expect(exports.inProgress).toBe(0);
      const readThen = pagesRead;
      await sleep(200);
      expect(pagesRead).toBe(readThen);
      // The board is 31 pages of 1,000 (and two statements before them): far from the end.
      expect(pagesRead).toBeLessThan(20);
    } finally {
      spy.mockRestore();
    }

    // The last of the token's budget of 7 a minute (the tests above spent 4); pages have their own.
    const third = await fetch(`${exportUrl}?spaceId=${SPACE}&format=ndjson`, {
      headers: { 'access-token': t.token },
    });
    expect(third.status).toBe(200);
    expect((await third.text()).split('\n').filter(Boolean)).toHaveLength(
      bruteForceBoard(events, SPACE).length,
    );
    const refused = await fetch(`${exportUrl}?spaceId=${SPACE}`, {
      headers: { 'access-token': t.token },
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as any).errors[0].extensions.code).toBe('RATE_LIMIT_EXCEEDED');
    const page = await t.gql(
      `{ space(id: ${SPACE}) { loyaltyPointsRanks(first: 1) { totalCount } } }`,
    );
    expect(page.body.data.space.loyaltyPointsRanks.totalCount).toBe(
      bruteForceBoard(events, SPACE).length,
    );
  }, 60_000);
});

describe('GET /export on an in-memory SQLite database', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { DATABASE_URL: 'sqlite::memory:' });
    await t.load([{ type: 'space', id: SPACE, name: 'In memory' }]);
  });

  afterAll(() => t?.close());

  it('refuses clearly, since there is no second connection to read a snapshot on', async () => {
    const response = await fetch(`${t.url.replace(/\/query$/, '/export')}?spaceId=${SPACE}`, {
      headers: { 'access-token': t.token },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0]).toMatchObject({
      message: expect.stringContaining('an in-memory database (sqlite::memory:)'),
      extensions: { code: 'OPERATION_NOT_SUPPORTED', http_status: 400 },
    });
    expect(t.app.get(BoardExportService).inProgress).toBe(0);
  });
});
