import { writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { runCli } from '../utils/cli';
import { scratchPath } from '../utils/scratch-files';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const LINES = [
  /* 1 */ '{"type":"space","id":1,"name":"Imported","description":"Loaded from a file"}',
  /* 2 */ '{"type":"sprint","id":5,"spaceId":1,"name":"Week 1","startTime":"2026-01-01T00:00:00Z","endTime":"2026-01-08T00:00:00Z"}',
  /* 3 */ '{not json',
  /* 4 */ '{"type":"quest","id":"q1","spaceId":1,"name":"Say hi","status":"Active","questType":"social","cap":10,"startTime":"2026-01-01T00:00:00+02:00"}',
  /* 5 */ '{"type":"participation","questId":"q1","address":"0xAAA"}',
  /* 6 */ '{"type":"participation","questId":"q1","address":"0xaaa"}',
  /* 7 */ '{"type":"participation","questId":"nope","address":"0xAAA"}',
  /* 8 */ '{"type":"points","key":"k1","spaceId":1,"address":"0xAAA","points":100,"occurredAt":"2026-01-01T00:00:00Z"}',
  /* 9 */ '{"type":"points","key":"k2","spaceId":1,"address":"0xBBB","points":50,"occurredAt":"2026-01-08T00:00:00Z"}',
  /* 10 */ '{"type":"points","key":"k3","spaceId":9,"address":"0xCCC","points":5,"occurredAt":"2026-01-02T00:00:00Z"}',
  /* 11 */ '{"type":"points","key":"k1","spaceId":1,"address":"0xaaa","points":100,"occurredAt":"2026-01-01T00:00:00Z"}',
  /* 12 */ '{"type":"points","key":"k1","spaceId":1,"address":"0xAAA","points":101,"occurredAt":"2026-01-01T00:00:00Z"}',
  /* 13 */ '',
  /* 14 */ '{"type":"points","key":"k4","spaceId":1,"address":"0xBBB","points":-50,"occurredAt":"2026-01-03T00:00:00Z"}',
  /* 15 */ '{"type":"points","spaceId":1,"address":"0xDDD","points":5,"occurredAt":"2026-01-02T00:00:00Z"}',
  /* 16 */ '{"type":"quest","id":"q2","spaceId":1,"name":"Retired","status":"Deleted"}',
];

/** A points record of space 1, as a line of an import file. */
const pointsLine = (key: string, address: string, value: number, occurredAt: string) =>
  JSON.stringify({ type: 'points', key, spaceId: 1, address, points: value, occurredAt });

const BOARD = `query($s: Int) { space(id: 1) { name description loyaltyPointsRanks(sprintId: $s) {
  totalCount list { rank points address { address } } } } }`;

describe.each(DB_KINDS)('import and quests on %s', (kind) => {
  let t: TestApp;
  let file: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    file = scratchPath('loyalty-import-', 'records.ndjson');
    writeFileSync(file, `${LINES.join('\n')}\n`);
  });
  afterAll(() => t?.close());

  it('applies every valid record and reports each refused one with its line number', async () => {
    const result = await runCli(['import', file], { DATABASE_URL: t.db.url });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const reported = result.stderr.split('\n').filter((line) => line.startsWith('line '));
    expect(reported).toEqual([
      'line 3: not valid JSON',
      'line 7: questId unknown quest nope',
      'line 10: spaceId unknown space 9',
      'line 12: key was already used for a different points record',
      'line 15: key is required',
    ]);
    expect(result.stderr).toContain('9 accepted, 1 duplicates, 5 refused');

    const board = await t.gql(BOARD, {});
    expect(board.body.data.space).toEqual({
      name: 'Imported',
      description: 'Loaded from a file',
      // 0xBBB: +50 then -50 leaves the board at 0 points.
      loyaltyPointsRanks: {
        totalCount: 1,
        list: [{ rank: 1, points: 100, address: { address: '0xAAA' } }],
      },
    });
    // Sprint window: k1 at the start is in, k2 at the end is out, k4 (-50) alone is below 0.
    const sprint = await t.gql(BOARD, { s: 5 });
    expect(sprint.body.data.space.loyaltyPointsRanks).toEqual({
      totalCount: 1,
      list: [{ rank: 1, points: 100, address: { address: '0xAAA' } }],
    });
  });

  it('changes nothing when the same file is imported again', async () => {
    const result = await runCli(['import', file], { DATABASE_URL: t.db.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('6 accepted, 4 duplicates, 5 refused');
    const board = await t.gql(BOARD, {});
    expect(board.body.data.space.loyaltyPointsRanks.list).toEqual([
      { rank: 1, points: 100, address: { address: '0xAAA' } },
    ]);
    const quest = await t.gql('{ quest(id: "q1") { participantsCount } }');
    expect(quest.body.data.quest.participantsCount).toBe(1);
  });

  it('serves quests with their status and participants, Deleted ones included', async () => {
    const q1 = await t.gql(
      '{ quest(id: "q1") { id name status participantsCount type startTime endTime cap } }',
    );
    expect(q1.body.data.quest).toEqual({
      id: 'q1',
      name: 'Say hi',
      status: 'Active',
      participantsCount: 1,
      type: 'social',
      startTime: '2025-12-31T22:00:00.000Z',
      endTime: null,
      cap: 10,
    });
    const q2 = await t.gql('{ quest(id: "q2") { name status participantsCount } }');
    expect(q2.body.data.quest).toEqual({
      name: 'Retired',
      status: 'Deleted',
      participantsCount: 0,
    });
    const missing = await t.gql('{ quest(id: "q404") { name } }');
    expect(missing.status).toBe(200);
    expect(missing.body.data).toEqual({ quest: null });
    expect(missing.body.errors[0]).toMatchObject({
      message: 'Quest not found',
      extensions: { code: 'QUEST_NOT_FOUND', category: 'NOT_FOUND', http_status: 200 },
    });
  });

  it('upserts by id: a left-out field keeps its value, an explicit null clears it', async () => {
    const outcomes = await t.load([
      { type: 'space', id: 1, description: null },
      { type: 'space', id: 3 },
      { type: 'profile', address: '0xaAa', username: 'alice', avatar: 'https://a.example/a.png' },
      { type: 'profile', address: '0xAAA', avatar: null },
      { type: 'quest', id: 'q1', status: 'CapReached' },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'accepted',
      'refused',
      'accepted',
      'accepted',
      'accepted',
    ]);
    expect(outcomes[1]).toMatchObject({ reason: 'name is required for a new space' });
    const response = await t.gql(
      `{ space(id: 1) { name description loyaltyPointsRanks { list { address { address username avatar } } } } quest(id: "q1") { name status } }`,
    );
    expect(response.body.data).toEqual({
      space: {
        name: 'Imported',
        description: null,
        loyaltyPointsRanks: {
          list: [{ address: { address: '0xAAA', username: 'alice', avatar: null } }],
        },
      },
      quest: { name: 'Say hi', status: 'CapReached' },
    });
  });

  it('rebuilds a sprint board from the ledger when its window moves', async () => {
    const [outcome] = await t.load([
      { type: 'sprint', id: 5, startTime: '2026-01-05T00:00:00Z', endTime: '2026-01-09T00:00:00Z' },
    ]);
    expect(outcome.status).toBe('accepted');
    const sprint = await t.gql(BOARD, { s: 5 });
    expect(sprint.body.data.space.loyaltyPointsRanks).toEqual({
      totalCount: 1,
      list: [{ rank: 1, points: 50, address: { address: '0xBBB' } }],
    });
    const sprints = await t.gql('{ space(id: 1) { sprints { id name startTime endTime } } }');
    expect(sprints.body.data.space.sprints).toEqual([
      {
        id: 5,
        name: 'Week 1',
        startTime: '2026-01-05T00:00:00.000Z',
        endTime: '2026-01-09T00:00:00.000Z',
      },
    ]);
  });

  it('takes an address back onto the board when its total rises above 0 again', async () => {
    await t.load([
      {
        type: 'points',
        key: 'k5',
        spaceId: 1,
        address: '0xbbb',
        points: 30,
        occurredAt: '2026-02-01T00:00:00Z',
      },
    ]);
    const board = await t.gql(BOARD, {});
    expect(board.body.data.space.loyaltyPointsRanks).toEqual({
      totalCount: 2,
      list: [
        { rank: 1, points: 100, address: { address: '0xAAA' } },
        { rank: 2, points: 30, address: { address: '0xBBB' } },
      ],
    });
  });
  it('keeps a batch of points exact across address ranges, a key reused across them included', async () => {
    // 300 addresses over one batch: on MariaDB the batch is applied as two transactions over
    // the lower and upper half of the addresses. Key "span" is sent for the lowest address and,
    // with other content, for the highest: one is accepted, the other refused as a conflict.
    const points = (key: string, n: number, value: number) =>
      pointsLine(key, `0xR${n.toString().padStart(3, '0')}`, value, '2026-03-01T00:00:00Z');
    const lines = [points('span', 0, 5)];
    const expected = new Map<string, number>();
    for (let i = 0; i < 900; i++) {
      const n = (i * 7) % 300;
      lines.push(points(`r-${i}`, n, (i % 9) - 2));
      expected.set(
        `0xr${n.toString().padStart(3, '0')}`,
        (expected.get(`0xr${n.toString().padStart(3, '0')}`) ?? 0) + (i % 9) - 2,
      );
    }
    lines.push(points('span', 299, 6));
    const ranges = scratchPath('loyalty-ranges-', 'ranges.ndjson');
    writeFileSync(ranges, `${lines.join('\n')}\n`);

    const result = await runCli(['import', ranges], { DATABASE_URL: t.db.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('901 accepted, 0 duplicates, 1 refused');
    const refusedLine = /line (\d+): key was already used for a different points record/.exec(
      result.stderr,
    );
    // SQLite applies the batch as one transaction, in file order: the later line is the conflict.
    expect(kind === 'sqlite' ? ['902'] : ['1', '902']).toContain(refusedLine?.[1]);
    const accepted = refusedLine?.[1] === '1' ? ['0xr299', 6] : ['0xr000', 5];
    expected.set(
      accepted[0] as string,
      expected.get(accepted[0] as string)! + (accepted[1] as number),
    );

    const exported = await runCli(['export', '--space', '1'], { DATABASE_URL: t.db.url });
    const rows = new Map(
      exported.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(','))
        .filter(([, address]) => address.toLowerCase().startsWith('0xr'))
        .map(([, address, , value]) => [address.toLowerCase(), Number(value)]),
    );
    expect(rows).toEqual(new Map([...expected].filter(([, total]) => total > 0)));

    // Imported again: every record is a duplicate, and the refused one is refused again.
    const again = await runCli(['import', ranges], { DATABASE_URL: t.db.url });
    expect(again.stderr).toContain('0 accepted, 901 duplicates, 1 refused');
  });

  it('stops at a database failure saying where and what it applied, and finishes once re-run', async () => {
    // A trigger fails the insert of one address's event, as a lost connection or a full disk
    // would fail a batch. Batches of 100: the first applies (one record refused as a conflict),
    // the second fails. On MariaDB that batch is two transactions over the lower and upper
    // addresses; only the upper holds the failing address, so the lower commits.
    const points = (key: string, address: string, value: number) =>
      pointsLine(key, address, value, '2026-03-02T00:00:00Z');
    const low = (n: number) => `0xSA${n.toString().padStart(2, '0')}`;
    const high = (n: number) => `0xSZ${n.toString().padStart(2, '0')}`;
    const lines: string[] = [];
    for (let i = 0; i < 100; i++) lines.push(points(`stop-${i}`, low(i % 50), 1 + (i % 3)));
    lines[49] = points('stop-0', low(7), 9); // line 50: key stop-0 with other content
    for (let i = 0; i < 50; i++) lines.push(points(`stop-low-${i}`, low(i), 2));
    lines[110] = points('stop-1', low(3), 9); // line 111, in the lower range: a conflict
    for (let i = 0; i < 49; i++) lines.push(points(`stop-high-${i}`, high(i), 4));
    lines.push(points('stop-fail', '0xSZFAIL', 5)); // line 200, in the upper range
    for (let i = 0; i < 100; i++) lines.push(points(`stop-late-${i}`, high(i % 50), 1));
    const file = scratchPath('loyalty-stop-', 'points.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);

    const source = t.app.get(DataSource);
    // Each database's own trigger language, run as written (no placeholders).
    const trigger = {
      sqlite: [
        `CREATE TRIGGER test_stop BEFORE INSERT ON points_events
         WHEN NEW.address_key = '0xszfail' BEGIN SELECT RAISE(ABORT, 'no events for 0xszfail'); END`,
      ],
      mariadb: [
        `CREATE TRIGGER test_stop BEFORE INSERT ON points_events FOR EACH ROW
         IF NEW.address_key = '0xszfail' THEN
           SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no events for 0xszfail';
         END IF`,
      ],
      postgres: [
        `CREATE FUNCTION test_stop() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.address_key = '0xszfail' THEN RAISE EXCEPTION 'no events for 0xszfail';
         END IF; RETURN NEW; END $$`,
        `CREATE TRIGGER test_stop BEFORE INSERT ON points_events FOR EACH ROW
         EXECUTE FUNCTION test_stop()`,
      ],
    }[kind];
    for (const statement of trigger) await source.query(statement);
    let stopped;
    try {
      stopped = await runCli(['import', file, '--batch-size', '100'], { DATABASE_URL: t.db.url });
    } finally {
      await source.query(
        kind === 'postgres' ? 'DROP FUNCTION test_stop CASCADE' : 'DROP TRIGGER test_stop',
      );
    }
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain(
      `Import of ${file} stopped at line 101: no events for 0xszfail`,
    );
    expect(stopped.stderr).not.toMatch(/\n\s+at /); // a database's error: no stack trace
    expect(stopped.stderr).toContain('line 50: key was already used for a different points record');
    if (kind === 'sqlite') {
      // One transaction per batch: nothing of the second.
      expect(stopped.stderr).toContain('Applied before it: 99 accepted, 0 duplicates, 1 refused.');
      expect(stopped.stderr).not.toContain('line 111:');
      expect(stopped.stderr).toContain('Nothing from line 101 on was applied, unless');
    } else {
      // The lower part committed: its 50 records, one of them refused, are reported.
      expect(stopped.stderr).toContain('Applied before it: 148 accepted, 0 duplicates, 2 refused.');
      expect(stopped.stderr).toContain('line 111: key was already used');
      expect(stopped.stderr).toContain(
        'Of the batch from line 101, only the part counted above was applied; nothing after it.',
      );
    }
    const stored = Number(
      (
        await runSql(
          source,
          `SELECT COUNT(*) AS n FROM points_events WHERE event_key LIKE 'stop-%'`,
        )
      )[0].n,
    );
    expect(stored).toBe(kind === 'sqlite' ? 99 : 148);

    // The failure gone, the same command goes on and ends with every total exact.
    const again = await runCli(['import', file, '--batch-size', '100'], {
      DATABASE_URL: t.db.url,
    });
    expect(again.code).toBe(1); // the two conflicts are refused again
    expect(again.stderr).toContain(
      `Imported ${file}: ${298 - stored} accepted, ${stored} duplicates, 2 refused`,
    );
    const expected = new Map<string, number>();
    lines.forEach((line, i) => {
      if (i === 49 || i === 110) return;
      const record = JSON.parse(line) as { address: string; points: number };
      const key = record.address.toLowerCase();
      expected.set(key, (expected.get(key) ?? 0) + record.points);
    });
    const rows: Array<{ addressKey: string; points: number | string }> = await runSql(
      source,
      `SELECT address_key AS addressKey, points FROM board_entries
       WHERE space_id = 1 AND sprint_id = 0 AND address_key LIKE '0xs%'`,
    );
    expect(new Map(rows.map((r) => [r.addressKey, Number(r.points)]))).toEqual(expected);
  });
});
