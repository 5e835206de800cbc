import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../utils/cli';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

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

const BOARD = `query($s: Int) { space(id: 1) { name description loyaltyPointsRanks(sprintId: $s) {
  totalCount list { rank points address { address } } } } }`;

describe.each(DB_KINDS)('import and quests on %s', (kind) => {
  let t: TestApp;
  let file: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    file = join(mkdtempSync(join(tmpdir(), 'loyalty-import-')), 'records.ndjson');
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
      JSON.stringify({
        type: 'points',
        key,
        spaceId: 1,
        address: `0xR${n.toString().padStart(3, '0')}`,
        points: value,
        occurredAt: '2026-03-01T00:00:00Z',
      });
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
    const ranges = join(mkdtempSync(join(tmpdir(), 'loyalty-ranges-')), 'ranges.ndjson');
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
});
