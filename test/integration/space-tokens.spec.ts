import { getDataSourceToken, getRepositoryToken } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { Repository } from 'typeorm';
import type { DataSource } from 'typeorm';
import { AccessTokenEntity } from '../../src/auth/access-token.entity';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { exitCodeFor, run } from '../../src/host/cli/cli';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { IngestService } from '../../src/ingest/ingest.service';
import { parseRecord } from '../../src/records/ingest-record';
import { SpacesService } from '../../src/spaces/spaces.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const DAY = 86_400_000;
const SPACE_A = 3;
const SPACE_B = 7;

/** The envelope of a refused token on any route, as a user compares two answers. */
const withoutIds = (body: unknown) =>
  JSON.parse(JSON.stringify(body), (key, value) =>
    key === 'request_id' || key === 'timestamp' ? '-' : value,
  );

describe.each(DB_KINDS)('space and deployment tokens on %s', (kind) => {
  let t: TestApp;
  let tokens: AccessTokensService;
  let dataSource: DataSource;
  let ingestUrl: string;

  async function ingest(body: string, token: string, contentType = 'application/json') {
    const response = await fetch(ingestUrl, {
      method: 'POST',
      headers: { 'content-type': contentType, 'access-token': token },
      body,
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const spaceName = async (id: number, token = t.token) =>
    (await t.gql(`{ space(id: ${id}) { name } }`, undefined, { token })).body.data?.space?.name;

  beforeAll(async () => {
    t = await startTestApp(kind);
    tokens = t.app.get(AccessTokensService);
    dataSource = t.app.get<DataSource>(getDataSourceToken());
    ingestUrl = t.url.replace(/\/query$/, '/ingest');
    await t.load([
      { type: 'space', id: SPACE_A, name: 'Team A' },
      { type: 'space', id: SPACE_B, name: 'Team B' },
    ]);
  });
  afterAll(() => t?.close());

  describe('the tokens service', () => {
    it('creates a space token with an expiry, and lists, finds and filters live tokens', async () => {
      const expiresAt = Date.now() + 30 * DAY;
      const created = await tokens.create('  team A ci  ', ['ingest', 'query'], {
        spaceId: SPACE_A,
        expiresAt,
      });
      expect(created).toMatchObject({
        name: 'team A ci',
        scopes: ['ingest', 'query'],
        spaceId: SPACE_A,
        expiresAt: new Date(expiresAt).toISOString(),
        lastUsedAt: null,
        lastUsedFrom: null,
      });
      const deployment = await tokens.create('deployment');
      expect(deployment).toMatchObject({ spaceId: null, expiresAt: null });
      const other = await tokens.create('team B', ['query'], { spaceId: SPACE_B });
      const { token: _value, ...info } = created;
      expect(await tokens.find(created.id)).toEqual(info);

      const ids = async (filter?: Parameters<AccessTokensService['list']>[0]) =>
        (await tokens.list(filter)).map((token) => token.id);
      expect(await ids({ spaceIds: [SPACE_A] })).toEqual([created.id]);
      expect(await ids({ spaceIds: [SPACE_A, SPACE_B] })).toEqual([created.id, other.id]);
      expect(await ids({ spaceIds: [SPACE_B], deployment: true })).toEqual(
        expect.arrayContaining([other.id, deployment.id]),
      );
      expect(await ids({ spaceIds: [SPACE_B], deployment: true })).not.toContain(created.id);
      expect(await ids({ spaceIds: [] })).toEqual([]);
      expect(await ids()).toEqual(expect.arrayContaining([created.id, deployment.id, other.id]));

      // Revoked and expired tokens are listed and found no more.
      await tokens.revoke(other.id);
      await runSql(dataSource, 'UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        deployment.id,
      ]);
      expect(await tokens.find(other.id)).toBeNull();
      expect(await tokens.find(deployment.id)).toBeNull();
      expect(await ids()).not.toEqual(expect.arrayContaining([other.id]));
      expect(await ids()).not.toContain(deployment.id);
      expect(await ids({ spaceIds: [SPACE_A, SPACE_B], deployment: true })).toContain(created.id);
    });

    it.each([
      ['a NUL in the name', 'ci\u0000bot', {}, 'Token name must not contain control characters'],
      ['a lone surrogate in the name', 'ci \ud800', {}, 'Token name must be valid Unicode text'],
      ['an empty name', '   ', {}, 'Token name must be 1 to 100 characters'],
      ['a space id of 0', 'ci', { spaceId: 0 }, "A token's space must be a space id"],
      ['a fractional space id', 'ci', { spaceId: 1.5 }, "A token's space must be a space id"],
      ['an expiry in the past', 'ci', { expiresAt: Date.now() - 1 }, 'in the future'],
      ['an expiry 6 years ahead', 'ci', { expiresAt: Date.now() + 6 * 366 * DAY }, '5 years'],
    ])('refuses %s, creating nothing', async (_case, name, options, message) => {
      const before = (await tokens.list()).length;
      await expect(tokens.create(name, ['query'], options)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(message),
      });
      expect(await tokens.list()).toHaveLength(before);
    });

    it('records the client address of the last use, with its time', async () => {
      const created = await tokens.create('watched', ['ingest', 'query']);
      const before = Date.now();
      expect((await t.gql('{ __typename }', undefined, { token: created.token })).status).toBe(200);
      await tokens.flushLastUsed();
      const seen = await tokens.find(created.id);
      expect(seen?.lastUsedFrom).toBe('127.0.0.1');
      expect(Date.parse(seen!.lastUsedAt!)).toBeGreaterThanOrEqual(before);
      const [row] = await runSql(
        dataSource,
        'SELECT last_used_from AS lastUsedFrom FROM access_tokens WHERE id = ?',
        [created.id],
      );
      expect(row.lastUsedFrom).toBe('127.0.0.1');
      // POST /ingest counts as a use too.
      await runSql(dataSource, 'UPDATE access_tokens SET last_used_from = NULL WHERE id = ?', [
        created.id,
      ]);
      expect((await ingest('[]', created.token)).status).toBe(200);
      await tokens.flushLastUsed();
      expect((await tokens.find(created.id))?.lastUsedFrom).toBe('127.0.0.1');
    });

    it('lets one of two creations of one name at once win, refusing the other', async () => {
      // The first creation stops between its name check and its insert, until the second has
      // had time to check the name too: the second must wait for the first, then see its row.
      let release!: () => void;
      const gate = new Promise<void>((done) => (release = done));
      let checked!: () => void;
      const firstChecked = new Promise<void>((done) => (checked = done));
      type Insert = Repository<AccessTokenEntity>['insert'];
      const { insert } = Repository.prototype as unknown as { insert: Insert };
      let calls = 0;
      jest.spyOn(Repository.prototype, 'insert').mockImplementation(async function (
        this: Repository<AccessTokenEntity>,
        ...args: Parameters<Insert>
      ) {
        if (this.target === AccessTokenEntity && ++calls === 1) {
          checked();
          await gate;
        }
        return insert.apply(this, args);
      });
      try {
        const options = { spaceId: SPACE_B, uniqueName: true };
        const first = tokens.create('Race For A Name', ['query'], options);
        await firstChecked;
        const second = tokens.create('race for a name', ['query'], options);
        await sleep(300);
        release();
        const results = await Promise.allSettled([first, second]);
        expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
        expect((results[1] as PromiseRejectedResult).reason).toMatchObject({
          code: 'ALREADY_EXISTS',
          message: expect.stringContaining(`space ${SPACE_B} is named "race for a name"`),
        });
      } finally {
        jest.restoreAllMocks();
      }
      const named = (await tokens.list({ spaceIds: [SPACE_B] })).filter(
        (token) => token.name.toLowerCase() === 'race for a name',
      );
      expect(named).toHaveLength(1);
    });
  });

  describe('POST /ingest with a space token', () => {
    const FEB = '2026-02-01T00:00:00Z';
    const pointsFor = (key: string, spaceId: number, address: string, value: number) => ({
      type: 'points',
      key,
      spaceId,
      address,
      points: value,
      occurredAt: FEB,
    });
    const sprint = (id: number, spaceId?: number) => ({
      type: 'sprint',
      id,
      ...(spaceId === undefined ? {} : { spaceId }),
      name: `S${id}`,
      startTime: '2026-01-01T00:00:00Z',
      endTime: '2026-03-01T00:00:00Z',
    });
    const quest = (id: string, spaceId?: number) => ({
      type: 'quest',
      id,
      ...(spaceId === undefined ? {} : { spaceId }),
      name: `Quest ${id}`,
      status: 'Active',
    });
    const refusedInto = (line: number, field: string, target: number) => ({
      line,
      status: 'refused',
      field,
      reason: `this token belongs to space ${SPACE_A} and cannot write into space ${target}`,
    });
    const idTaken = (line: number, id: number | string) => ({
      line,
      status: 'refused',
      field: 'id',
      reason: `id ${id} is already used by another space`,
    });
    const unknownQuest = (line: number, questId: string) => ({
      line,
      status: 'refused',
      field: 'questId',
      reason: `questId unknown quest ${questId}`,
    });
    const PROFILE_REFUSAL =
      'profiles are shared by every space: only deployment tokens send profile records (this token belongs to space 3)';

    /** What a deployment token sees of space B: everything a space-A token must not change. */
    const spaceB = async () =>
      (
        await t.gql(
          `{ space(id: ${SPACE_B}) { name description sprints { id name }
             loyaltyPointsRanks { totalCount list { points address { id username } } } }
             quest(id: "qB") { name status participantsCount } }`,
        )
      ).body;

    let teamA: string;

    beforeAll(async () => {
      teamA = (await tokens.create('team A ingest', ['ingest', 'query'], { spaceId: SPACE_A }))
        .token;
      await t.load([
        sprint(71, SPACE_B),
        quest('qB', SPACE_B),
        quest('qA', SPACE_A),
        pointsFor('b-0', SPACE_B, '0xB0', 5),
        { type: 'profile', address: '0xB0', username: 'bee' },
      ]);
    });
    afterAll(() => t.load([{ type: 'space', id: SPACE_A, name: 'Team A' }]));

    it.each([
      ['a JSON array', 'application/json'],
      ['NDJSON', 'application/x-ndjson'],
    ])(
      "applies its own space's records and refuses each record for another space, in %s",
      async (_name, contentType) => {
        const tag = contentType === 'application/json' ? 'j' : 'n';
        const records = [
          { type: 'space', id: SPACE_A, name: `Team A (${tag})`, description: 'ours' },
          { type: 'space', id: SPACE_B, name: 'Taken over' },
          pointsFor(`${tag}-a1`, SPACE_A, `0xA1${tag}`, 10),
          pointsFor(`${tag}-b1`, SPACE_B, '0xB1', 99),
          pointsFor(`${tag}-a2`, SPACE_A, `0xA2${tag}`, 20),
          sprint(tag === 'j' ? 31 : 32, SPACE_A),
          sprint(tag === 'j' ? 72 : 73, SPACE_B),
          // The stored sprint of B, named without a space or claiming A's.
          { type: 'sprint', id: 71, name: 'Renamed' },
          { ...sprint(71, SPACE_A), name: 'Moved' },
          quest(`qA-${tag}`, SPACE_A),
          quest(`qB-${tag}`, SPACE_B),
          { type: 'quest', id: 'qB', name: 'Renamed', status: 'Deleted' },
          { type: 'participation', questId: 'qA', address: `0xA1${tag}` },
          { type: 'participation', questId: 'qB', address: `0xA1${tag}` },
          { type: 'participation', questId: 'nowhere', address: `0xA1${tag}` },
          { type: 'profile', address: '0xB0', username: 'hijacked' },
          { type: 'profile', address: `0xA1${tag}`, username: 'ours' },
        ];
        const before = await spaceB();
        const body =
          contentType === 'application/json'
            ? JSON.stringify(records)
            : records.map((record) => JSON.stringify(record)).join('\n');
        const response = await ingest(body, teamA, contentType);
        expect(response.status).toBe(200);
        expect(response.body.results).toEqual([
          { line: 1, status: 'accepted' },
          refusedInto(2, 'id', SPACE_B),
          { line: 3, status: 'accepted' },
          refusedInto(4, 'spaceId', SPACE_B),
          { line: 5, status: 'accepted' },
          { line: 6, status: 'accepted' },
          refusedInto(7, 'spaceId', SPACE_B),
          idTaken(8, 71),
          idTaken(9, 71),
          { line: 10, status: 'accepted' },
          refusedInto(11, 'spaceId', SPACE_B),
          idTaken(12, 'qB'),
          { line: 13, status: 'accepted' },
          unknownQuest(14, 'qB'),
          {
            line: 15,
            status: 'refused',
            field: 'questId',
            reason: 'questId unknown quest nowhere',
          },
          { line: 16, status: 'refused', reason: PROFILE_REFUSAL },
          { line: 17, status: 'refused', reason: PROFILE_REFUSAL },
        ]);
        expect(response.body).toMatchObject({ accepted: 6, duplicates: 0, refused: 11 });

        // Space B is as it was; space A has what was sent.
        expect(await spaceB()).toEqual(before);
        const a = await t.gql(
          `{ space(id: ${SPACE_A}) { name description sprints { id }
             loyaltyPointsRanks { list { points address { id username } } } }
             quest(id: "qA-${tag}") { name } }`,
        );
        expect(a.body.data.space).toMatchObject({
          name: `Team A (${tag})`,
          description: 'ours',
          sprints: expect.arrayContaining([{ id: tag === 'j' ? 31 : 32 }]),
        });
        expect(a.body.data.space.loyaltyPointsRanks.list).toEqual(
          expect.arrayContaining([
            { points: 20, address: { id: `0xa2${tag}`, username: null } },
            { points: 10, address: { id: `0xa1${tag}`, username: null } },
          ]),
        );
        expect(a.body.data.quest).toEqual({ name: `Quest qA-${tag}` });
        const missing = await t.gql(`{ quest(id: "qB-${tag}") { name } }`);
        expect(missing.body.errors[0].extensions.code).toBe('QUEST_NOT_FOUND');
      },
    );

    describe('what another space holds, private or public', () => {
      const PRIVATE = 9;
      const ABSENT = 99;
      /** What a deployment token sees of the private space: what a space-A token must not change. */
      const privateSpace = async () =>
        (
          await t.gql(
            `{ space(id: ${PRIVATE}) { name sprints { id name } loyaltyPointsRanks { totalCount } }
               quest(id: "qP") { name status participantsCount } }`,
          )
        ).body;

      beforeAll(async () => {
        await t.load([{ type: 'space', id: PRIVATE, name: 'Private' }]);
        expect(await t.app.get(SpacesService).setPrivate(PRIVATE, true)).toBe(true);
      });

      it('refuses a participation in its quest exactly as one in a quest that does not exist', async () => {
        const participation = JSON.stringify([
          { type: 'participation', questId: 'qP', address: '0xA1' },
        ]);
        /** The answer, and the statements the request ran against quests. */
        const send = async () => {
          t.recorder.queries.length = 0;
          const answer = await ingest(participation, teamA);
          return { answer, reads: t.recorder.queries.filter((q) => /\bquest/.test(q)) };
        };
        // qP does not exist yet: the answer of an unknown quest.
        const unknown = await send();
        expect(unknown.answer.body.results).toEqual([unknownQuest(1, 'qP')]);
        await t.load([sprint(91, PRIVATE), quest('qP', PRIVATE)]);
        const before = await privateSpace();
        // Now qP is a quest of the private space: the same answer, to the byte, after the same work.
        const hidden = await send();
        expect(hidden.answer).toEqual(unknown.answer);
        expect(hidden.reads).toEqual(unknown.reads);
        expect(hidden.reads.length).toBeGreaterThan(0);
        // A public space's quest is refused the same way.
        const ofPublic = await ingest(
          JSON.stringify([{ type: 'participation', questId: 'qB', address: '0xA1' }]),
          teamA,
        );
        expect(ofPublic.body.results).toEqual([unknownQuest(1, 'qB')]);
        expect(await privateSpace()).toEqual(before);
        expect(before.data.quest.participantsCount).toBe(0);
      });

      it('refuses a sprint or quest id it holds without naming it, the same for a public one', async () => {
        await t.load([sprint(91, PRIVATE), quest('qP', PRIVATE)]);
        const before = await privateSpace();
        const response = await ingest(
          JSON.stringify([
            sprint(91, SPACE_A),
            sprint(71, SPACE_A),
            { type: 'sprint', id: 91, name: 'Renamed' },
            { type: 'sprint', id: 71, name: 'Renamed' },
            quest('qP', SPACE_A),
            quest('qB', SPACE_A),
            { type: 'quest', id: 'qP', name: 'Renamed' },
            { type: 'quest', id: 'qB', name: 'Renamed' },
          ]),
          teamA,
        );
        expect(response.body.results).toEqual([
          idTaken(1, 91),
          idTaken(2, 71),
          idTaken(3, 91),
          idTaken(4, 71),
          idTaken(5, 'qP'),
          idTaken(6, 'qB'),
          idTaken(7, 'qP'),
          idTaken(8, 'qB'),
        ]);
        expect(await privateSpace()).toEqual(before);
      });

      it('refuses a record naming another space in its own fields alike whether that space exists', async () => {
        const named = (spaceId: number) => [
          pointsFor(`named-${spaceId}`, spaceId, '0xA1', 1),
          sprint(900 + spaceId, spaceId),
          quest(`named-${spaceId}`, spaceId),
          { type: 'space', id: spaceId, name: 'Taken over' },
        ];
        const reasons = async (spaceId: number) =>
          (await ingest(JSON.stringify(named(spaceId)), teamA)).body.results.map(
            (result: { field: string; reason: string }) => [
              result.field,
              result.reason.replace(String(spaceId), '<space>'),
            ],
          );
        const absent = await reasons(ABSENT);
        expect(absent).toEqual([
          ['spaceId', 'this token belongs to space 3 and cannot write into space <space>'],
          ['spaceId', 'this token belongs to space 3 and cannot write into space <space>'],
          ['spaceId', 'this token belongs to space 3 and cannot write into space <space>'],
          ['id', 'this token belongs to space 3 and cannot write into space <space>'],
        ]);
        expect(await reasons(PRIVATE)).toEqual(absent);
        expect(await reasons(SPACE_B)).toEqual(absent);
      });

      it('keeps the messages that name the space for deployment tokens and the import', async () => {
        await t.load([sprint(91, PRIVATE), quest('qP', PRIVATE)]);
        const records = [
          sprint(91, SPACE_A),
          quest('qP', SPACE_A),
          { type: 'participation', questId: 'nowhere', address: '0xA1' },
        ];
        const expected = [
          {
            status: 'refused',
            field: 'spaceId',
            reason: `spaceId sprint 91 belongs to space ${PRIVATE}`,
          },
          {
            status: 'refused',
            field: 'spaceId',
            reason: `spaceId quest qP belongs to space ${PRIVATE}`,
          },
          { status: 'refused', field: 'questId', reason: 'questId unknown quest nowhere' },
        ];
        const deployment = (await tokens.create('deployment messages', ['ingest'])).token;
        const response = await ingest(JSON.stringify(records), deployment);
        expect(response.body.results).toEqual(
          expected.map((outcome, i) => ({ line: i + 1, ...outcome })),
        );
        // The import applies records with no write scope, as IngestService does by default.
        const parsed = records.map((record) => {
          const result = parseRecord(record);
          if (!result.ok) throw new Error(result.reason);
          return result.record;
        });
        expect(await t.app.get(IngestService).applyRecords(parsed)).toEqual(expected);
      });
    });

    it('refuses a profile record alone, changing no profile', async () => {
      const response = await ingest(
        JSON.stringify([{ type: 'profile', address: '0xB0', username: 'again' }]),
        teamA,
      );
      expect(response.body).toEqual({
        accepted: 0,
        duplicates: 0,
        refused: 1,
        results: [{ line: 1, status: 'refused', reason: PROFILE_REFUSAL }],
      });
      const board = await t.gql(
        `{ space(id: ${SPACE_B}) { loyaltyPointsRanks { list { address { username } } } } }`,
      );
      expect(board.body.data.space.loyaltyPointsRanks.list).toEqual([
        { address: { username: 'bee' } },
      ]);
    });

    it('lets a deployment token write into any space and send profiles, as before', async () => {
      const deployment = (await tokens.create('deployment ingest', ['ingest'])).token;
      const response = await ingest(
        JSON.stringify([
          pointsFor('d-b', SPACE_B, '0xB9', 1),
          pointsFor('d-a', SPACE_A, '0xA9', 1),
          { type: 'profile', address: '0xB9', username: 'nine' },
          { type: 'participation', questId: 'qB', address: '0xB9' },
        ]),
        deployment,
      );
      expect(response.body).toMatchObject({ accepted: 4, refused: 0 });
      const b = await t.gql(
        `{ space(id: ${SPACE_B}) { addressLoyaltyPoints(address: "0xB9") { points address { username } } } }`,
      );
      expect(b.body.data.space.addressLoyaltyPoints).toEqual({
        points: 1,
        address: { username: 'nine' },
      });
    });
  });

  describe('token create on the command line', () => {
    /** `loyalty token create ...` in this process, on the spec's database. */
    async function cli(...args: string[]) {
      let stdout = '';
      let stderr = '';
      const environment = process.env.DATABASE_URL;
      process.env.DATABASE_URL = t.db.url;
      jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        stdout += String(chunk);
        return true;
      });
      jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
        stderr += String(chunk);
        return true;
      });
      try {
        const code = await run(['token', 'create', ...args]).catch(exitCodeFor);
        return { code, stdout, stderr };
      } finally {
        jest.restoreAllMocks();
        if (environment === undefined) delete process.env.DATABASE_URL;
        else process.env.DATABASE_URL = environment;
      }
    }

    it('creates a token of a space, expiring, that works for that space', async () => {
      const nextYear = new Date().getUTCFullYear() + 1;
      const made = await cli(
        '--name',
        'team A cli',
        '--scope',
        'query,ingest',
        '--space',
        String(SPACE_A),
        '--expires',
        `${nextYear}-01-31`,
      );
      expect(made.code).toBe(0);
      const token = made.stdout.trim();
      expect(made.stdout).toBe(`${token}\n`);
      expect(made.stderr).toContain(
        `for space ${SPACE_A} with scopes ingest, query; it expires ${nextYear}-01-31T23:59:59.999Z.`,
      );
      const listed = (await tokens.list({ spaceIds: [SPACE_A] })).find(
        (info) => info.name === 'team A cli',
      );
      expect(listed).toMatchObject({
        spaceId: SPACE_A,
        scopes: ['ingest', 'query'],
        expiresAt: `${nextYear}-01-31T23:59:59.999Z`,
      });
      expect(await spaceName(SPACE_A, token)).toBe('Team A');
      const refused = await ingest(
        JSON.stringify([{ type: 'space', id: SPACE_B, name: 'x' }]),
        token,
      );
      expect(refused.body.results[0].reason).toBe(
        `this token belongs to space ${SPACE_A} and cannot write into space ${SPACE_B}`,
      );
    });

    it('creates a deployment token that never expires by default', async () => {
      const made = await cli('--name', 'deployment cli', '--expires', 'never');
      expect(made.code).toBe(0);
      expect(made.stderr).toContain(
        'for the whole deployment with scopes query; it never expires.',
      );
      expect((await tokens.list({ deployment: true })).map((info) => info.name)).toContain(
        'deployment cli',
      );
    });

    it('refuses a space that does not exist, creating nothing', async () => {
      const before = (await tokens.list()).length;
      expect(await cli('--name', 'ghost', '--space', '404')).toEqual({
        code: 2,
        stdout: '',
        stderr:
          '--space 404: there is no space 404 (create it first: import or POST /ingest a space record)\n',
      });
      expect(await tokens.list()).toHaveLength(before);
    });
  });

  describe('a revocation during a check in flight', () => {
    /**
     * Holds the service's next read of a token row until `release()` (the row as the database
     * answered it when read), so a revocation can land while the check is in flight.
     */
    function holdNextTokenRead() {
      const repository = t.app.get<Repository<AccessTokenEntity>>(
        getRepositoryToken(AccessTokenEntity),
      );
      const findOne = repository.findOne.bind(repository);
      let release!: () => void;
      const gate = new Promise<void>((done) => (release = done));
      let started!: () => void;
      const read = new Promise<void>((done) => (started = done));
      jest.spyOn(repository, 'findOne').mockImplementationOnce(async (options) => {
        const row = await findOne(options);
        started();
        await gate;
        return row;
      });
      return { read, release };
    }
    afterEach(() => jest.restoreAllMocks());

    it.each([
      ['revoke', (id: string) => tokens.revoke(id)],
      ['rotate with no grace', (id: string) => tokens.rotate(id, 0)],
    ])(
      'lets %s win: the token read before it is not cached, and the next request is refused',
      async (_name, end) => {
        const created = await tokens.create('in flight', ['query']);
        const held = holdNextTokenRead();
        const inFlight = t.gql('{ __typename }', undefined, { token: created.token });
        await held.read;
        await end(created.id);
        held.release();
        // Valid when its row was read: that request passes.
        expect((await inFlight).status).toBe(200);
        const next = await t.gql('{ __typename }', undefined, { token: created.token });
        expect(next.status).toBe(401);
        expect(next.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      },
    );
  });

  describe('the settings endpoint', () => {
    const EMAIL = 'operator@example.com';
    const PASSWORD = 'correct horse battery staple';
    let client: DashboardClient;
    let csrf: string;

    beforeAll(async () => {
      await t.app.get(AdminsService).create(EMAIL, PASSWORD, { operator: true });
      client = new DashboardClient(t.url.replace('/query', ''));
      expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
      csrf = await client.csrfToken();
    });

    const call = async (method: string, path: string, json?: unknown) => {
      const response = await client.request(`/settings/server-api/tokens${path}`, {
        method,
        headers: method === 'GET' ? {} : { 'x-csrf-token': csrf },
        json,
      });
      return { status: response.status, body: response.text ? JSON.parse(response.text) : null };
    };

    it('creates a token that never expires when expires is null', async () => {
      const created = await call('POST', '', { name: 'null expiry', expires: null });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'null expiry', expiresAt: null });
      expect(await tokens.find(created.body.id)).toMatchObject({ expiresAt: null });
      expect((await t.gql('{ __typename }', undefined, { token: created.body.token })).status).toBe(
        200,
      );
    });

    it('answers a rotation of a token in its grace with INVALID_ARGUMENT, and revokes it', async () => {
      const created = await call('POST', '', { name: 'rotated twice' });
      const first = await call('POST', `/${created.body.id}/rotate`, { graceSeconds: 60 });
      expect(first.status).toBe(201);
      const listed = await call('GET', '');
      expect(listed.body.map((token: { id: string }) => token.id)).toEqual(
        expect.arrayContaining([created.body.id, first.body.id]),
      );
      const again = await call('POST', `/${created.body.id}/rotate`, { graceSeconds: 60 });
      expect(again.status).toBe(400);
      expect(again.body.errors[0]).toMatchObject({
        message: expect.stringContaining(
          `This token was already rotated: rotate its successor ${first.body.prefix}... instead`,
        ),
        extensions: { code: 'INVALID_ARGUMENT', http_status: 400 },
      });
      expect((await call('GET', '')).body).toEqual(listed.body);
      expect((await call('DELETE', `/${created.body.id}`)).status).toBe(204);
      const after = (await call('GET', '')).body.map((token: { id: string }) => token.id);
      expect(after).not.toContain(created.body.id);
      expect(after).toContain(first.body.id);
      expect((await t.gql('{ __typename }', undefined, { token: created.body.token })).status).toBe(
        401,
      );
    });
  });

  describe('expiry', () => {
    it('refuses an expired token on /query and /ingest exactly as a revoked one', async () => {
      const expiring = await tokens.create('expiring', ['ingest', 'query']);
      const revoked = await tokens.create('revoked', ['ingest', 'query']);
      expect(await spaceName(SPACE_A, expiring.token)).toBe('Team A');
      expect((await ingest('[]', expiring.token)).status).toBe(200);
      await runSql(dataSource, 'UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        expiring.id,
      ]);
      await tokens.revoke(revoked.id);
      await sleep(1_100); // past the verified cache of the uses above
      const query = '{ space(id: 3) { name } }';
      const expiredQuery = await t.gql(query, undefined, { token: expiring.token });
      const revokedQuery = await t.gql(query, undefined, { token: revoked.token });
      expect(expiredQuery.status).toBe(401);
      expect(expiredQuery.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      expect(withoutIds(expiredQuery.body)).toEqual(withoutIds(revokedQuery.body));
      const body = JSON.stringify([{ type: 'space', id: SPACE_A, name: 'Expired wrote' }]);
      const expiredIngest = await ingest(body, expiring.token);
      const revokedIngest = await ingest(body, revoked.token);
      expect(expiredIngest.status).toBe(401);
      expect(expiredIngest.body.errors[0]).toMatchObject({
        message: 'Invalid access token',
        extensions: { code: 'INVALID_TOKEN', http_status: 401 },
      });
      expect(withoutIds(expiredIngest.body)).toEqual(withoutIds(revokedIngest.body));
      expect(await spaceName(SPACE_A)).toBe('Team A');
    });

    it('stops a token at its expiry even while its verification is cached', async () => {
      const created = await tokens.create('short', ['query'], { expiresAt: Date.now() + 400 });
      expect((await t.gql('{ __typename }', undefined, { token: created.token })).status).toBe(200);
      await sleep(450);
      // The cache of the use above (1 s) has not run out; the token has.
      const response = await t.gql('{ __typename }', undefined, { token: created.token });
      expect(response.status).toBe(401);
      expect(response.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
    });
  });

  describe('rotation', () => {
    it('gives a new secret with the same name, scopes, space and lifetime; the old works for the grace', async () => {
      const lifetime = 30 * DAY;
      const old = await tokens.create('rotating', ['ingest', 'query'], {
        spaceId: SPACE_A,
        expiresAt: Date.now() + lifetime,
      });
      const oldCreatedAt = Date.parse(old.createdAt);
      await sleep(20);
      const before = Date.now();
      const rotated = await tokens.rotate(old.id, 60_000);
      const after = Date.now();
      expect(rotated).not.toBeNull();
      const { token: next, previous } = rotated!;
      expect(next.id).not.toBe(old.id);
      expect(next.token).not.toBe(old.token);
      expect(next).toMatchObject({
        name: 'rotating',
        scopes: ['ingest', 'query'],
        spaceId: SPACE_A,
      });
      const nextExpiry = Date.parse(next.expiresAt!);
      expect(nextExpiry - Date.parse(next.createdAt)).toBe(lifetime);
      expect(Date.parse(next.createdAt)).toBeGreaterThan(oldCreatedAt);
      expect(previous.id).toBe(old.id);
      expect(Date.parse(previous.expiresAt!)).toBeGreaterThanOrEqual(before + 60_000);
      expect(Date.parse(previous.expiresAt!)).toBeLessThanOrEqual(after + 60_000);
      // Both work during the grace, on /query and /ingest.
      expect(await spaceName(SPACE_A, old.token)).toBe('Team A');
      expect(await spaceName(SPACE_A, next.token)).toBe('Team A');
      expect((await ingest('[]', old.token)).status).toBe(200);
      expect((await ingest('[]', next.token)).status).toBe(200);
      expect(await tokens.find(next.id)).toMatchObject({ spaceId: SPACE_A });
      // A token already rotated is not rotated again: its successor is.
      await expect(tokens.rotate(old.id, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await tokens.rotate(next.id, 0)).not.toBeNull();
    });

    it('refuses to rotate a token in its grace, naming the successor to rotate, and changes nothing', async () => {
      const old = await tokens.create('in grace', ['ingest', 'query'], { spaceId: SPACE_A });
      const first = (await tokens.rotate(old.id, 60_000))!;
      const listed = await tokens.list();
      // Still live and listed during its grace, beside its successor.
      expect(listed.map((token) => token.id)).toEqual(
        expect.arrayContaining([old.id, first.token.id]),
      );
      const refusal = {
        code: 'INVALID_ARGUMENT',
        message:
          `This token was already rotated: rotate its successor ${first.token.prefix}... instead ` +
          '(this one works until its grace ends, or until it is revoked)',
      };
      await expect(tokens.rotate(old.id, 0)).rejects.toMatchObject(refusal);
      await expect(tokens.rotate(old.id, 60_000)).rejects.toMatchObject(refusal);
      // Nothing changed: no new token, both still work, the grace end as it was.
      expect(await tokens.list()).toEqual(listed);
      expect(await spaceName(SPACE_A, old.token)).toBe('Team A');
      expect(await spaceName(SPACE_A, first.token.token)).toBe('Team A');

      // Once the successor is rotated too, the refusal names the newest one.
      const second = (await tokens.rotate(first.token.id, 60_000))!;
      await expect(tokens.rotate(old.id, 0)).rejects.toMatchObject({
        message: expect.stringContaining(`rotate its successor ${second.token.prefix}... instead`),
      });
      // With the successors revoked, there is none to rotate: the message says what to do.
      await tokens.revoke(first.token.id);
      await tokens.revoke(second.token.id);
      await expect(tokens.rotate(old.id, 0)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message:
          'This token was already rotated and its successor is revoked or expired: revoke this one, or create a new token',
      });
    });

    it('revokes a token in its grace at once, leaving its successor working', async () => {
      const old = await tokens.create('revoked in grace', ['query']);
      expect((await t.gql('{ __typename }', undefined, { token: old.token })).status).toBe(200);
      const rotated = (await tokens.rotate(old.id, 60_000))!;
      expect((await t.gql('{ __typename }', undefined, { token: old.token })).status).toBe(200);
      expect(await tokens.revoke(old.id)).toBe(true);
      const refused = await t.gql('{ __typename }', undefined, { token: old.token });
      expect(refused.status).toBe(401);
      expect(refused.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      expect(await tokens.find(old.id)).toBeNull();
      expect((await tokens.list()).map((token) => token.id)).not.toContain(old.id);
      expect(
        (await t.gql('{ __typename }', undefined, { token: rotated.token.token })).status,
      ).toBe(200);
      expect(await tokens.find(rotated.token.id)).toMatchObject({ name: 'revoked in grace' });
    });

    it('refuses the old token once the grace is over, and at once with a grace of 0', async () => {
      const graceful = await tokens.create('graceful');
      const abrupt = await tokens.create('abrupt');
      // Both verified and cached by this instance first.
      expect((await t.gql('{ __typename }', undefined, { token: graceful.token })).status).toBe(
        200,
      );
      expect((await t.gql('{ __typename }', undefined, { token: abrupt.token })).status).toBe(200);
      const soft = await tokens.rotate(graceful.id, 600);
      const hard = await tokens.rotate(abrupt.id, 0);
      expect(hard?.previous.expiresAt).not.toBeNull();
      expect((await t.gql('{ __typename }', undefined, { token: abrupt.token })).status).toBe(401);
      expect((await t.gql('{ __typename }', undefined, { token: hard!.token.token })).status).toBe(
        200,
      );
      expect((await t.gql('{ __typename }', undefined, { token: graceful.token })).status).toBe(
        200,
      );
      await sleep(700);
      const late = await t.gql('{ __typename }', undefined, { token: graceful.token });
      expect(late.status).toBe(401);
      expect(late.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      expect((await t.gql('{ __typename }', undefined, { token: soft!.token.token })).status).toBe(
        200,
      );
      expect(await tokens.find(graceful.id)).toBeNull();
      expect(await tokens.find(abrupt.id)).toBeNull();
    });

    it('keeps a token that never expires never expiring, and ends the old one on another instance within the cache TTL', async () => {
      const second = await startTestApp(kind, {}, t.db);
      try {
        const forever = await tokens.create('forever');
        expect(
          (await second.gql('{ __typename }', undefined, { token: forever.token })).status,
        ).toBe(200);
        const rotated = await tokens.rotate(forever.id, 0);
        expect(rotated?.token.expiresAt).toBeNull();
        await sleep(1_050);
        expect(
          (await second.gql('{ __typename }', undefined, { token: forever.token })).status,
        ).toBe(401);
        expect(
          (await second.gql('{ __typename }', undefined, { token: rotated!.token.token })).status,
        ).toBe(200);
      } finally {
        await second.close();
      }
    });

    it('answers null for an unknown, revoked or expired token, and refuses a bad grace', async () => {
      const revoked = await tokens.create('revoked before rotation');
      await tokens.revoke(revoked.id);
      expect(await tokens.rotate(revoked.id, 1000)).toBeNull();
      expect(await tokens.rotate('00000000-0000-0000-0000-000000000000', 1000)).toBeNull();
      const expired = await tokens.create('expired before rotation');
      await runSql(dataSource, 'UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        expired.id,
      ]);
      expect(await tokens.rotate(expired.id, 1000)).toBeNull();
      const live = await tokens.create('live');
      const count = (await tokens.list()).length;
      for (const grace of [-1, 1.5, 30 * DAY + 1])
        await expect(tokens.rotate(live.id, grace)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      expect(await tokens.list()).toHaveLength(count);
      expect(await tokens.find(live.id)).toMatchObject({ expiresAt: null });
    });
  });
});
