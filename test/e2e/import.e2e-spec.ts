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
});
