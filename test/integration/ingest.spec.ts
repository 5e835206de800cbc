import { DataSource } from 'typeorm';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { BoardTotalsStore } from '../../src/leaderboards/ledger/board-totals.store';
import { PointsLedgerService } from '../../src/leaderboards/ledger/points-ledger.service';
import { IngestLoad } from '../../src/host/http/ingest-load';
import { bruteForceBoard, ExpectedEntry, PointsFixture, seeded } from '../utils/board-model';
import { runCli } from '../utils/cli';
import { scratchPath } from '../utils/scratch-files';
import { DB_KINDS } from '../utils/test-databases';
import { scopeRefusal, startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const SPACE = { type: 'space', id: 1, name: 'Ingest' };
const SPRINTS = [
  {
    type: 'sprint',
    id: 11,
    spaceId: 1,
    name: 'W1',
    startTime: '2026-03-01T00:00:00Z',
    endTime: '2026-03-08T00:00:00Z',
  },
  {
    type: 'sprint',
    id: 12,
    spaceId: 1,
    name: 'W2',
    startTime: '2026-03-08T00:00:00Z',
    endTime: '2026-03-15T00:00:00Z',
  },
];
const WINDOWS = {
  11: { start: SPRINTS[0].startTime, end: SPRINTS[0].endTime },
  12: { start: SPRINTS[1].startTime, end: SPRINTS[1].endTime },
};

// Pages of 7: a walk of these boards (tens of entries) crosses several pages.
const BOARD = `query($s: Int, $after: String) { space(id: 1) { loyaltyPointsRanks(sprintId: $s, first: 7, cursorAfter: $after) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { id address username } } } } }`;

const points = (key: string, address: string, value: number, occurredAt: string) => ({
  type: 'points',
  key,
  spaceId: 1,
  address,
  points: value,
  occurredAt,
});

/** An instance's POST /ingest. */
const ingestUrlOf = (app: TestApp) => app.url.replace(/\/query$/, '/ingest');

interface Row {
  rank: number;
  addressKey: string;
  points: number;
}

describe.each(DB_KINDS)('POST /ingest and bulk import on %s', (kind) => {
  let t: TestApp;
  let ingestToken: string;
  let ingestUrl: string;

  async function post(
    body: string,
    contentType = 'application/json',
    token: string | null = ingestToken,
    url = ingestUrl,
  ) {
    const headers: Record<string, string> = { 'content-type': contentType };
    if (token !== null) headers['access-token'] = token;
    const response = await fetch(url, { method: 'POST', headers, body });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** The whole board through /query, page by page. */
  async function walk(sprintId?: number): Promise<{
    rows: Array<Row & { address: string; username: string | null }>;
    totalCount: number;
  }> {
    const rows: Array<Row & { address: string; username: string | null }> = [];
    let after: string | undefined;
    let totalCount = 0;
    for (;;) {
      const page = await t.gql(BOARD, { s: sprintId ?? null, after: after ?? null });
      const board = page.body.data.space.loyaltyPointsRanks;
      totalCount = board.totalCount;
      for (const entry of board.list) {
        rows.push({
          rank: entry.rank,
          addressKey: entry.address.id,
          address: entry.address.address,
          username: entry.address.username,
          points: entry.points,
        });
      }
      if (!board.pageInfo.hasNextPage) return { rows, totalCount };
      after = board.pageInfo.endCursor;
    }
  }

  /** A board's totals by address key, through /query; `prefix` keeps one test's addresses. */
  async function totals(sprintId?: number, prefix = ''): Promise<Map<string, number>> {
    const { rows } = await walk(sprintId);
    return new Map(
      rows.filter((r) => r.addressKey.startsWith(prefix)).map((r) => [r.addressKey, r.points]),
    );
  }

  /** What the all-time board must hold of these records' addresses (each key counted once). */
  const modelTotals = (records: Array<ReturnType<typeof points>>) =>
    new Map(bruteForceBoard(records, 1).map((e) => [e.addressKey, e.points]));

  beforeAll(async () => {
    t = await startTestApp(kind, {
      INGEST_MAX_RECORDS: '500',
      MAX_BODY_BYTES: '8192',
      INGEST_MAX_BODY_BYTES: '200000',
    });
    ingestToken = (await t.app.get(AccessTokensService).create('ingest', ['ingest'])).token;
    ingestUrl = ingestUrlOf(t);
    const setup = await post(JSON.stringify([SPACE, ...SPRINTS]));
    expect(setup.body.accepted).toBe(3);
  });
  afterAll(() => t?.close());

  it('refuses tokens without the ingest scope, and requests without a token', async () => {
    const body = JSON.stringify([points('scope-1', '0xS', 5, '2026-03-02T00:00:00Z')]);
    const queryOnly = await post(body, 'application/json', t.token);
    expect(queryOnly.status).toBe(403);
    expect(queryOnly.body.errors).toEqual([scopeRefusal('ingest')]);
    const none = await post(body, 'application/json', null);
    expect(none.status).toBe(401);
    expect(none.body.errors[0].extensions.code).toBe('TOKEN_REQUIRED');
    expect((await walk()).rows.find((r) => r.addressKey === '0xs')).toBeUndefined();
  });

  it('applies a batch with one bad record and names the line, field and reason', async () => {
    const ndjson = [
      JSON.stringify(points('bad-1', '0xB1', 10, '2026-03-02T00:00:00Z')),
      '',
      JSON.stringify({ ...points('bad-2', '0xB2', 10, '2026-03-02T00:00:00Z'), points: 1.5 }),
      JSON.stringify(points('bad-3', '0xB3', 10, '2026-03-02T00:00:00Z')),
    ].join('\n');
    const response = await post(ndjson, 'application/x-ndjson');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ accepted: 2, duplicates: 0, refused: 1 });
    expect(response.body.results).toEqual([
      { line: 1, status: 'accepted' },
      { line: 3, status: 'refused', field: 'points', reason: 'points must be an integer' },
      { line: 4, status: 'accepted' },
    ]);
    expect(await totals(undefined, '0xb')).toEqual(
      new Map([
        ['0xb1', 10],
        ['0xb3', 10],
      ]),
    );
  });

  it('acknowledges a repeated delivery, refuses a conflicting one, and changes nothing', async () => {
    const batch = JSON.stringify([
      points('dup-1', '0xD1', 40, '2026-03-03T00:00:00Z'),
      points('dup-2', '0xD2', 30, '2026-03-03T00:00:00Z'),
    ]);
    expect((await post(batch)).body).toMatchObject({ accepted: 2 });
    const before = await walk();
    const again = await post(batch);
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 2, refused: 0 });
    // The same key in another letter case of the address is the same content.
    const recased = await post(
      JSON.stringify([points('dup-1', '0xd1', 40, '2026-03-03T00:00:00Z')]),
    );
    expect(recased.body).toMatchObject({ duplicates: 1 });
    const conflict = await post(
      JSON.stringify([points('dup-2', '0xD2', 31, '2026-03-03T00:00:00Z')]),
    );
    expect(conflict.body.results).toEqual([
      {
        line: 1,
        status: 'refused',
        field: 'key',
        reason: expect.stringContaining('different points record'),
      },
    ]);
    expect(await walk()).toEqual(before);
  });

  it("keeps each points record's reason in the ledger, newest first per address", async () => {
    const reasoned = (key: string, value: number, at: string, reason?: string | null) => ({
      ...points(key, '0xREASON', value, at),
      ...(reason === undefined ? {} : { reason }),
    });
    const batch = [
      reasoned('why-1', 50, '2026-03-04T00:00:00Z', '  Won the March quiz '),
      reasoned('why-2', -20, '2026-03-05T00:00:00Z', 'Refund of a double grant'),
      reasoned('why-3', 5, '2026-03-05T00:00:00Z'),
    ];
    expect((await post(JSON.stringify(batch))).body).toMatchObject({ accepted: 3 });
    // The reason is part of the record: the same key again with another reason is refused.
    const changed = await post(
      JSON.stringify([reasoned('why-2', -20, '2026-03-05T00:00:00Z', 'Another reason')]),
    );
    expect(changed.body.results[0]).toMatchObject({ status: 'refused', field: 'key' });
    const tooLong = await post(
      JSON.stringify([reasoned('why-4', 1, '2026-03-05T00:00:00Z', 'x'.repeat(201))]),
    );
    expect(tooLong.body.results[0]).toEqual({
      line: 1,
      status: 'refused',
      field: 'reason',
      reason: 'reason must be at most 200 characters',
    });
    const ledger = t.app.get(PointsLedgerService);
    // Newest first; the two entries of one time by key, descending (the index's own order).
    const history = await ledger.addressEvents(1, '0xreason', { limit: 2 });
    expect(history).toEqual({
      events: [
        { key: 'why-3', points: 5, occurredAt: Date.parse('2026-03-05T00:00:00Z'), reason: null },
        {
          key: 'why-2',
          points: -20,
          occurredAt: Date.parse('2026-03-05T00:00:00Z'),
          reason: 'Refund of a double grant',
        },
      ],
      older: true,
      newer: false,
    });
    const all = await ledger.addressEvents(1, '0xReason', { limit: 10 });
    expect({ older: all.older, newer: all.newer }).toEqual({ older: false, newer: false });
    expect(all.events.map((e) => [e.key, e.reason])).toEqual([
      ['why-3', null],
      ['why-2', 'Refund of a double grant'],
      ['why-1', 'Won the March quiz'],
    ]);
  });

  it('applies each record once when 20 deliveries of the same batch race', async () => {
    const records = Array.from({ length: 50 }, (_, i) =>
      points(`race-${i}`, `0xRACE${i % 7}`, 1 + i, '2026-03-04T00:00:00Z'),
    );
    const body = JSON.stringify(records);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.reduce((sum, a) => sum + a.body.accepted, 0)).toBe(50);
    expect(answers.reduce((sum, a) => sum + a.body.duplicates, 0)).toBe(19 * 50);
    expect(await totals(undefined, '0xrace')).toEqual(modelTotals(records));
  });

  it('applies each record once when 20 deliveries of overlapping batches race', async () => {
    // Request i of a round carries keys [25i, 25i + 100): most keys come in four requests at once,
    // as when retried batches of a feed overlap. MySQL/MariaDB writers meet on each shared key.
    const sent: Array<ReturnType<typeof points>> = [];
    for (let round = 0; round < 3; round++) {
      // A token per round: 60 requests in a moment are over one token's rate limit.
      const { token } = await t.app.get(AccessTokensService).create(`lap-${round}`, ['ingest']);
      const record = (k: number) =>
        points(`lap-${round}-${k}`, `0xLAP${k % 37}`, 1 + (k % 5), '2026-03-04T00:00:00Z');
      const keys = 19 * 25 + 100;
      const requests = Array.from({ length: 20 }, (_, i) =>
        Array.from({ length: 100 }, (_, j) => record(i * 25 + j)),
      );
      sent.push(...requests.flat());
      const answers = await Promise.all(
        requests.map((batch) => post(JSON.stringify(batch), 'application/json', token)),
      );
      expect(answers.map((a) => [a.status, a.body.errors?.[0]?.message])).toEqual(
        Array(20).fill([200, undefined]),
      );
      expect(answers.reduce((sum, a) => sum + a.body.accepted, 0)).toBe(keys);
      expect(answers.reduce((sum, a) => sum + a.body.duplicates, 0)).toBe(20 * 100 - keys);
    }
    expect(await totals(undefined, '0xlap')).toEqual(modelTotals(sent));
  });

  it('leaves nothing of a request that fails in the database half-way, and answers the others', async () => {
    // A board change that cannot be written: the request's ledger rows, and the board changes
    // of the address before it (and on MySQL/MariaDB its board rows), are written by then.
    const source = t.app.get(DataSource);
    // Each database's own trigger language, run as written (no placeholders).
    const trigger = {
      sqlite: [
        `CREATE TRIGGER fail_boom BEFORE INSERT ON board_changes WHEN NEW.address_key = '0xboom'
         BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`,
      ],
      mariadb: [
        `CREATE TRIGGER fail_boom BEFORE INSERT ON board_changes FOR EACH ROW
         BEGIN IF NEW.address_key = '0xboom' THEN
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'disk on fire'; END IF; END`,
      ],
      postgres: [
        `CREATE FUNCTION fail_boom() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.address_key = '0xboom' THEN RAISE EXCEPTION 'disk on fire'; END IF;
         RETURN NEW; END $$`,
        `CREATE TRIGGER fail_boom BEFORE INSERT ON board_changes FOR EACH ROW
         EXECUTE FUNCTION fail_boom()`,
      ],
    }[kind];
    for (const statement of trigger) await source.query(statement);
    const half = [
      points('half-1', '0xAAA', 5, '2026-03-04T00:00:00Z'),
      points('half-2', '0xBOOM', 7, '2026-03-04T00:00:00Z'),
      points('half-3', '0xZZZ', 9, '2026-03-10T00:00:00Z'),
      points('half-4', '0xHALFOLD', 1, '2026-03-04T00:00:00Z'), // an address already on the board
    ];
    expect(
      (await post(JSON.stringify([points('half-0', '0xHALFOLD', 3, '2026-03-04T00:00:00Z')]))).body,
    ).toMatchObject({ accepted: 1 });
    const ledger = async () =>
      (
        await runSql(
          source,
          `SELECT COUNT(*) AS n FROM points_events WHERE event_key IN (${half.map(() => '?').join(', ')})`,
          half.map((record) => record.key),
        )
      )[0].n;
    const before = [await totals(), await totals(11), await totals(12)];
    try {
      // With another request at the same time: on SQLite both may share one transaction.
      const [failed, other] = await Promise.all([
        post(JSON.stringify(half)),
        post(JSON.stringify([points('whole-1', '0xWHOLE', 4, '2026-03-04T00:00:00Z')])),
      ]);
      expect(failed.status).toBe(500);
      expect(failed.body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      expect(JSON.stringify(failed.body)).not.toContain('disk on fire');
      expect(other.status).toBe(200);
      expect(other.body.accepted).toBe(1);
    } finally {
      await source.query(
        kind === 'postgres' ? 'DROP FUNCTION fail_boom CASCADE' : 'DROP TRIGGER fail_boom',
      );
    }
    expect(Number(await ledger())).toBe(0);
    expect([await totals(), await totals(11), await totals(12)]).toEqual([
      new Map([...before[0], ['0xwhole', 4]]),
      new Map([...before[1], ['0xwhole', 4]]),
      before[2],
    ]);
    // Sent again, it applies whole.
    expect((await post(JSON.stringify(half))).body).toMatchObject({ accepted: 4 });
    const allTime = await totals();
    expect(['0xaaa', '0xboom', '0xzzz', '0xhalfold'].map((a) => allTime.get(a))).toEqual([
      5, 7, 9, 4,
    ]);
    expect((await totals(12)).get('0xzzz')).toBe(9);
  });

  it('takes deductions, and an address whose total drops to 0 or below leaves the board', async () => {
    const start = await walk();
    await post(JSON.stringify([points('ded-1', '0xDED', 25, '2026-03-05T00:00:00Z')]));
    expect((await walk()).totalCount).toBe(start.totalCount + 1);
    const down = await post(
      JSON.stringify([points('ded-2', '0xDED', -10, '2026-03-05T01:00:00Z')]),
    );
    expect(down.body.accepted).toBe(1);
    expect((await walk()).rows.find((r) => r.addressKey === '0xded')?.points).toBe(15);
    await post(JSON.stringify([points('ded-3', '0xDED', -15, '2026-03-05T02:00:00Z')]));
    const after = await walk();
    expect(after.totalCount).toBe(start.totalCount);
    expect(after.rows.find((r) => r.addressKey === '0xded')).toBeUndefined();
    await post(JSON.stringify([points('ded-4', '0xDED', -5, '2026-03-05T03:00:00Z')]));
    await post(JSON.stringify([points('ded-5', '0xDED', 6, '2026-03-05T04:00:00Z')]));
    expect((await walk()).rows.find((r) => r.addressKey === '0xded')?.points).toBe(1);
  });

  it('attributes events to every sprint whose window holds them: start in, end out', async () => {
    // A sprint overlapping both weeks' edge, created before the events.
    const overlapping = {
      ...SPRINTS[0],
      id: 13,
      name: 'Weekend',
      startTime: '2026-03-07T00:00:00Z',
      endTime: '2026-03-09T00:00:00Z',
    };
    expect((await post(JSON.stringify([overlapping]))).body.accepted).toBe(1);
    await post(
      JSON.stringify([
        points('edge-1', '0xEDGE', 1, '2026-03-01T00:00:00Z'), // W1 start: in W1
        points('edge-2', '0xEDGE', 10, '2026-03-07T23:59:59.999Z'), // W1 last instant; Weekend
        points('edge-3', '0xEDGE', 100, '2026-03-08T00:00:00Z'), // W1 end = W2 start: W2 and Weekend
        points('edge-4', '0xEDGE', 1000, '2026-03-15T00:00:00Z'), // W2 end: no sprint
        points('edge-5', '0xEDGE', 5000, '2026-02-28T23:59:59.999Z'), // before W1: no sprint
      ]),
    );
    const find = async (sprint?: number) =>
      (await walk(sprint)).rows.find((r) => r.addressKey === '0xedge')?.points;
    expect(await find(11)).toBe(11);
    expect(await find(12)).toBe(100);
    expect(await find(13)).toBe(110);
    expect(await find()).toBe(6111);
  });

  it('refuses a request over the record limit whole, applying none of it', async () => {
    const records = Array.from({ length: 501 }, (_, i) =>
      points(`big-${i}`, '0xBIG', 1, '2026-03-06T00:00:00Z'),
    );
    const response = await post(JSON.stringify(records));
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
    expect((await walk()).rows.find((r) => r.addressKey === '0xbig')).toBeUndefined();
    const notRecords = await post('{"type":"points"}');
    expect(notRecords.status).toBe(400);
    expect(notRecords.body.errors[0].extensions.code).toBe('MALFORMED_REQUEST');
  });

  it('takes bodies up to its own limit, while other paths keep the /query limit', async () => {
    const records = Array.from({ length: 100 }, (_, i) =>
      points(`size-${i}`, '0xSIZE', 1, '2026-03-06T00:00:00Z'),
    );
    const body = JSON.stringify(records);
    expect(body.length).toBeGreaterThan(8192);
    expect((await post(body)).body).toMatchObject({ accepted: 100 });
    const huge = await post(body.padEnd(200_001, ' '));
    expect(huge.status).toBe(400);
    expect(huge.body.errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
    // NDJSON, streamed by the module's own parser, has the same limit.
    const lines = records.map((record) => JSON.stringify(record)).join('\n');
    const hugeLines = await post(lines.padEnd(200_001, ' '), 'application/x-ndjson');
    expect(hugeLines.status).toBe(400);
    expect(hugeLines.body.errors[0]).toMatchObject({
      message: 'Request body is too large: at most 200000 bytes',
      extensions: { code: 'REQUEST_TOO_LARGE' },
    });
    expect((await post(lines.padEnd(200_000, ' '), 'application/x-ndjson')).body).toMatchObject({
      duplicates: 100,
    });
    for (const path of ['/query', '/nowhere']) {
      const response = await fetch(t.url.replace(/\/query$/, path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': t.token },
        body,
      });
      expect([400, 413]).toContain(response.status);
    }
  });

  it('counts a request in flight from its headers until it ends, however it ends', async () => {
    const load = t.app.get(IngestLoad);
    const settled = async () => {
      for (let i = 0; i < 50 && load.requestsInFlight > 0; i++) await sleep(20);
      return load.requestsInFlight;
    };
    // A body still arriving: counted (a group commit waits a moment for it).
    const uploading = httpRequest(ingestUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-ndjson',
        'access-token': ingestToken,
        'content-length': '100000',
      },
    });
    uploading.on('error', () => undefined);
    uploading.write(JSON.stringify(points('flight-0', '0xF', 1, '2026-03-06T00:00:00Z')));
    let counted = 0;
    for (let i = 0; i < 50 && counted === 0; i++) {
      await sleep(20);
      counted = load.requestsInFlight;
    }
    expect(counted).toBe(1);
    // Answered, refused at the gate, refused for its body, too large, and cut off by its client.
    const good = JSON.stringify([points('flight-1', '0xF', 1, '2026-03-06T00:00:00Z')]);
    expect((await post(good)).status).toBe(200);
    expect((await post(good, 'application/json', null)).status).toBe(401);
    expect((await post('{"type":"points"}')).status).toBe(400);
    expect((await post(good.padEnd(200_001, ' '))).status).toBe(400);
    uploading.destroy();
    expect(await settled()).toBe(0);
    expect((await walk()).rows.find((r) => r.addressKey === '0xf')?.points).toBe(1);
  });

  it('exports a board as CSV equal to a full page walk of /query', async () => {
    await post(JSON.stringify([{ type: 'profile', address: '0xB1', username: 'Bee, "one"' }]));
    for (const sprintId of [undefined, 11]) {
      const args = ['export', '--space', '1', ...(sprintId ? ['--sprint', String(sprintId)] : [])];
      const result = await runCli(args, { DATABASE_URL: t.db.url });
      expect(result.code).toBe(0);
      const { rows } = await walk(sprintId);
      const csvField = (value: string) =>
        /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
      const expected = rows.map(
        (r) => `${r.rank},${r.address},${csvField(r.username ?? '')},${r.points}`,
      );
      expect(result.stdout.trimEnd().split('\n')).toEqual([
        'rank,address,username,points',
        ...expected,
      ]);
      expect(rows.length).toBeGreaterThan(3 * 7); // four pages of /query at least
    }
    const missing = await runCli(['export', '--space', '99'], { DATABASE_URL: t.db.url });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Space not found');
  });

  it('finishes an import while POST /ingest takes a live feed on the same database', async () => {
    // The import's transaction reads its batch's keys before it writes, while the live requests
    // commit: each side must wait for the other's transaction, not fail. (On SQLite the import
    // failed with "database is locked" once its retries ran out.) The feed goes to a second
    // instance with no rate limit, as fast as it answers.
    const server = await startTestApp(kind, { RATE_LIMIT_INGEST: 'off' }, t.db);
    try {
      const token = (await server.app.get(AccessTokensService).create('feed', ['ingest'])).token;
      const record = (key: string, n: number, value: number) =>
        points(key, `0xLIVE${n.toString(16)}`, value, '2026-03-02T00:00:00Z');
      const imported = Array.from({ length: 60_000 }, (_, i) =>
        record(`race-import-${i}`, i % 800, (i % 7) + 1),
      );
      const file = scratchPath('loyalty-race-', 'points.ndjson');
      writeFileSync(file, imported.map((r) => JSON.stringify(r)).join('\n') + '\n');
      let importing = true;
      const importer = runCli(['import', file], { DATABASE_URL: t.db.url }).finally(
        () => (importing = false),
      );
      // Two clients send 1,000 new records at a time until the import has ended.
      const live: Array<ReturnType<typeof points>> = [];
      const answers: Array<{ status: number; accepted: number }> = [];
      await Promise.all(
        [0, 1].map(async () => {
          while (importing) {
            const batch = Array.from({ length: 1000 }, () => {
              const i = live.length;
              const next = record(`race-live-${i}`, (i * 3) % 800, (i % 5) + 1);
              live.push(next);
              return next;
            });
            const answer = await post(
              JSON.stringify(batch),
              'application/json',
              token,
              ingestUrlOf(server),
            );
            answers.push({ status: answer.status, accepted: answer.body.accepted });
          }
        }),
      );
      const result = await importer;
      expect(result.stderr).toContain('60000 accepted, 0 duplicates, 0 refused');
      expect(result.code).toBe(0);
      // The feed ran the whole time, every request applied whole.
      expect(answers.length).toBeGreaterThan(4);
      expect(answers.filter((a) => a.status !== 200 || a.accepted !== 1000)).toEqual([]);
      // Written by another process and another instance: read from the database itself (this
      // instance's pages catch up within a second, see the rank index specs), once this instance
      // has folded what the writers left in the change log (SQLite, see BoardBacklog).
      await t.app.get(BoardTotalsStore).settle({ spaceId: 1, sprintId: 0 });
      const rows: Array<{ addressKey: string; points: number | string }> = await runSql(
        t.app.get(DataSource),
        `SELECT address_key AS addressKey, points FROM board_entries
           WHERE space_id = 1 AND sprint_id = 0 AND points > 0 AND address_key LIKE '0xlive%'`,
      );
      expect(new Map(rows.map((r) => [r.addressKey, Number(r.points)]))).toEqual(
        modelTotals([...imported, ...live]),
      );
    } finally {
      await server.app.close();
    }
  });
});

const min = (a: string, b: string) => (a < b ? a : b);
const max = (a: string, b: string) => (a > b ? a : b);

describe.each(DB_KINDS)('import killed half-way on %s', (kind) => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('ends, once re-run, with totals exactly equal to a brute-force sum of the file', async () => {
    t = await startTestApp(kind);
    const random = seeded(kind === 'sqlite' ? 7 : 8);
    const events: PointsFixture[] = [];
    for (let i = 0; i < 40_000; i++) {
      const address = `0xK${Math.floor(random() * 3000).toString(16)}`;
      const value = random() < 0.1 ? -Math.floor(random() * 30) - 1 : Math.floor(random() * 50) + 1;
      const at = new Date(
        Date.parse('2026-03-01T00:00:00Z') + Math.floor(random() * 14 * 86400) * 1000,
      );
      events.push({
        key: `kill-${i}`,
        spaceId: 1,
        address: random() < 0.5 ? address : address.toLowerCase(),
        points: value,
        occurredAt: at.toISOString(),
      });
    }
    const file = scratchPath('loyalty-kill-', 'points.ndjson');
    writeFileSync(
      file,
      [SPACE, ...SPRINTS, ...events.map((e) => ({ type: 'points', ...e }))]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const env = { ...process.env, DATABASE_URL: t.db.url };
    const child = spawn(
      process.execPath,
      [
        join(__dirname, '..', '..', 'dist', 'src', 'host', 'cli', 'main.js'),
        'import',
        file,
        '--batch-size',
        '1000',
      ],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // Kill it once some batches are in, well before the end.
    const source = t.app.get(DataSource);
    const count = async () =>
      Number((await runSql(source, 'SELECT COUNT(*) AS n FROM points_events'))[0].n);
    let exitCode: number | null | undefined;
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve((exitCode = signal ? -1 : code))),
    );
    let applied = 0;
    while ((applied = await count()) < 5_000) {
      if (exitCode !== undefined) throw new Error(`import ended before it was killed: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    expect(await exited).toBe(-1);
    applied = await count();
    expect(applied).toBeGreaterThan(0);
    expect(applied).toBeLessThan(events.length);
    // A killed transaction leaves nothing of itself. SQLite: whole batches only (the first holds
    // the space and sprints too). MariaDB applies a batch of points as two transactions over
    // separate address ranges: whole batches, and of the batch under way the lower or upper range.
    if (kind === 'sqlite') expect((applied + 3) % 1000).toBe(0);
    const stored = new Set<string>(
      (await runSql<{ k: string }>(source, 'SELECT event_key AS k FROM points_events')).map(
        (row) => row.k,
      ),
    );
    const partial: string[] = [];
    for (let start = -3; start < events.length; start += 1000) {
      const batch = events.slice(Math.max(0, start), start + 1000);
      const done = batch.filter((e) => stored.has(e.key)).map((e) => e.address.toLowerCase());
      const left = batch.filter((e) => !stored.has(e.key)).map((e) => e.address.toLowerCase());
      if (done.length === 0 || left.length === 0) continue;
      partial.push(`${start}`);
      const [lowDone, highDone] = [done.reduce(min), done.reduce(max)];
      const [lowLeft, highLeft] = [left.reduce(min), left.reduce(max)];
      expect(highDone < lowLeft || highLeft < lowDone).toBe(true);
    }
    expect(partial.length).toBeLessThanOrEqual(kind === 'sqlite' ? 0 : 1);

    const rerun = await runCli(['import', file], { DATABASE_URL: t.db.url });
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain(
      `${events.length + 3 - applied} accepted, ${applied} duplicates, 0 refused`,
    );

    const expectBoard = async (sprintId: number | undefined, expected: ExpectedEntry[]) => {
      const result = await runCli(
        ['export', '--space', '1', ...(sprintId ? ['--sprint', String(sprintId)] : [])],
        { DATABASE_URL: t.db.url },
      );
      const rows = result.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => {
          const [rank, address, , value] = line.split(',');
          return { rank: Number(rank), addressKey: address.toLowerCase(), points: Number(value) };
        });
      expect(rows).toEqual(expected);
    };
    await expectBoard(undefined, bruteForceBoard(events, 1));
    await expectBoard(11, bruteForceBoard(events, 1, WINDOWS[11]));
    await expectBoard(12, bruteForceBoard(events, 1, WINDOWS[12]));
  });
});
