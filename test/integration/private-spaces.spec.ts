import Fastify from 'fastify';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { installResponseCache } from '../../src/host/http/response-cache';
import { SpacesService } from '../../src/spaces/spaces.service';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const PRIVATE = 3;
const PUBLIC = 7;
/** No space has this id; one digit, as PRIVATE, so that every offset in an answer lines up. */
const UNKNOWN = 5;

/** Every way /query reaches a space's data, for a space id `id`. */
const SHAPES: Array<[string, (id: number) => string]> = [
  ['space', (id) => `{ space(id: ${id}) { id name description } }`],
  ['its sprints', (id) => `{ space(id: ${id}) { name sprints { id name } } }`],
  [
    'its all-time board',
    (id) =>
      `{ space(id: ${id}) { loyaltyPointsRanks { totalCount list { rank points address { id username } } } } }`,
  ],
  [
    'a sprint board',
    (id) => `{ space(id: ${id}) { loyaltyPointsRanks(sprintId: 31) { totalCount } } }`,
  ],
  [
    'an address lookup',
    (id) => `{ space(id: ${id}) { addressLoyaltyPoints(address: "0xA1") { rank points } } }`,
  ],
  [
    'spaceLoyaltyPointsRanks',
    (id) => `{ spaceLoyaltyPointsRanks(spaceId: ${id}) { totalCount list { rank points } } }`,
  ],
  [
    'spaceLoyaltyPointsRanks of a sprint',
    (id) => `{ spaceLoyaltyPointsRanks(spaceId: ${id}, sprintId: 31) { totalCount } }`,
  ],
];

/** An answer as a user compares two: request ids and timestamps vary by nature. */
const comparable = (text: string) =>
  text
    .replace(/"request_id":"[^"]*"/g, '"request_id":"-"')
    .replace(/"timestamp":"[^"]*"/g, '"timestamp":"-"');

describe.each(DB_KINDS)('private spaces on %s', (kind) => {
  let t: TestApp;
  let own: string;
  let otherSpace: string;
  let noSuchSpace: string;
  let deployment: string;

  async function post(query: string, token: string) {
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, text: await response.text() };
  }

  /** The statements a request ran against the tables that hold spaces and quests. */
  async function readsOf(query: string, token: string) {
    t.recorder.queries.length = 0;
    const answer = await post(query, token);
    const reads = t.recorder.queries.filter((q) => /\b(spaces|quests|sprints|board_)/.test(q));
    return { answer, reads };
  }

  beforeAll(async () => {
    // A longer cache than the default, so that a warm entry is still warm when a spec looks.
    t = await startTestApp(kind, { RESPONSE_CACHE_MS: '1000' });
    await t.load([
      { type: 'space', id: PRIVATE, name: 'Secret', description: 'hidden' },
      { type: 'space', id: PUBLIC, name: 'Open' },
      {
        type: 'sprint',
        id: 31,
        spaceId: PRIVATE,
        name: 'S31',
        startTime: '2026-01-01T00:00:00Z',
        endTime: '2026-03-01T00:00:00Z',
      },
      { type: 'quest', id: 'q3', spaceId: PRIVATE, name: 'Secret quest', status: 'Active' },
      { type: 'quest', id: 'q7', spaceId: PUBLIC, name: 'Open quest', status: 'Active' },
      ...[PRIVATE, PUBLIC].map((spaceId) => ({
        type: 'points',
        key: `p-${spaceId}`,
        spaceId,
        address: '0xA1',
        points: 10 * spaceId,
        occurredAt: '2026-02-01T00:00:00Z',
      })),
      { type: 'profile', address: '0xA1', username: 'ada' },
    ]);
    const spaces = t.app.get(SpacesService);
    expect(await spaces.setPrivate(PRIVATE, true)).toBe(true);
    const tokens = t.app.get(AccessTokensService);
    own = (await tokens.create('own', ['query'], { spaceId: PRIVATE })).token;
    otherSpace = (await tokens.create('other', ['query'], { spaceId: PUBLIC })).token;
    noSuchSpace = (await tokens.create('nowhere', ['query'], { spaceId: 99 })).token;
    deployment = t.token;
  });
  afterAll(() => t?.close());

  it('shows the flag on the space, and sets it only on a space that exists', async () => {
    const spaces = t.app.get(SpacesService);
    expect((await spaces.findSpace(PRIVATE))?.isPrivate).toBe(true);
    expect((await spaces.findSpace(PUBLIC))?.isPrivate).toBe(false);
    expect((await spaces.listSpaces()).map((space) => [space.id, space.isPrivate])).toEqual([
      [PRIVATE, true],
      [PUBLIC, false],
    ]);
    expect(await spaces.setPrivate(404, true)).toBe(false);
    expect(await spaces.findSpace(404)).toBeNull();
    // Setting the flag it already has is no failure.
    expect(await spaces.setPrivate(PRIVATE, true)).toBe(true);
  });

  describe.each([
    ['a token of another space', () => otherSpace],
    ['a token of a space that does not exist', () => noSuchSpace],
  ])('read with %s', (_name, tokenOf) => {
    it.each(SHAPES)(
      'answers %s exactly as for a space that does not exist',
      async (_shape, queryOf) => {
        const hidden = await readsOf(queryOf(PRIVATE), tokenOf());
        const missing = await readsOf(queryOf(UNKNOWN), tokenOf());
        expect(hidden.answer.status).toBe(200);
        expect(JSON.parse(hidden.answer.text).errors[0]).toMatchObject({
          message: 'Space not found',
          extensions: { code: 'SPACE_NOT_FOUND', category: 'NOT_FOUND', http_status: 200 },
        });
        expect(comparable(hidden.answer.text)).toBe(comparable(missing.answer.text));
        expect(hidden.answer.text).not.toMatch(/Secret|hidden|S31|"points"/);
        // The same statements, the unknown space's id aside: no extra read that could be timed.
        expect(hidden.reads.length).toBe(missing.reads.length);
      },
    );

    it('answers a quest of the private space exactly as a quest that does not exist', async () => {
      const hidden = await readsOf('{ quest(id: "q3") { id name status } }', tokenOf());
      const missing = await readsOf('{ quest(id: "q0") { id name status } }', tokenOf());
      expect(JSON.parse(hidden.answer.text)).toMatchObject({
        data: { quest: null },
        errors: [{ message: 'Quest not found', extensions: { code: 'QUEST_NOT_FOUND' } }],
      });
      expect(comparable(hidden.answer.text)).toBe(comparable(missing.answer.text));
      expect(hidden.reads.length).toBe(missing.reads.length);
    });

    it('still reads a public space and its quests', async () => {
      const answer = JSON.parse(
        (
          await post(
            `{ space(id: ${PUBLIC}) { name loyaltyPointsRanks { list { points } } } quest(id: "q7") { name } }`,
            tokenOf(),
          )
        ).text,
      );
      expect(answer).toEqual({
        data: {
          space: { name: 'Open', loyaltyPointsRanks: { list: [{ points: 70 }] } },
          quest: { name: 'Open quest' },
        },
      });
    });
  });

  describe.each([
    ['its own token', () => own],
    ['a deployment token', () => deployment],
  ])('read with %s', (_name, tokenOf) => {
    it('answers every shape with data', async () => {
      const answers = await Promise.all(
        SHAPES.map(async ([, queryOf]) =>
          JSON.parse((await post(queryOf(PRIVATE), tokenOf())).text),
        ),
      );
      for (const answer of answers) expect(answer.errors).toBeUndefined();
      expect(answers.map((answer) => answer.data)).toEqual([
        { space: { id: String(PRIVATE), name: 'Secret', description: 'hidden' } },
        { space: { name: 'Secret', sprints: [{ id: 31, name: 'S31' }] } },
        {
          space: {
            loyaltyPointsRanks: {
              totalCount: 1,
              list: [{ rank: 1, points: 30, address: { id: '0xa1', username: 'ada' } }],
            },
          },
        },
        { space: { loyaltyPointsRanks: { totalCount: 1 } } },
        { space: { addressLoyaltyPoints: { rank: 1, points: 30 } } },
        { spaceLoyaltyPointsRanks: { totalCount: 1, list: [{ rank: 1, points: 30 }] } },
        { spaceLoyaltyPointsRanks: { totalCount: 1 } },
      ]);
    });

    it('answers a quest of the private space', async () => {
      expect(JSON.parse((await post('{ quest(id: "q3") { name } }', tokenOf())).text)).toEqual({
        data: { quest: { name: 'Secret quest' } },
      });
    });
  });

  describe('the response cache', () => {
    it("never serves the owner's cached answer to another token", async () => {
      const query = `{ space(id: ${PRIVATE}) { name loyaltyPointsRanks { totalCount } } }`;
      const first = await post(query, own);
      expect(JSON.parse(first.text).data.space.name).toBe('Secret');
      // Warm: the owner's second identical request is served from the cache.
      const warm = await readsOf(query, own);
      expect(warm.answer.text).toBe(first.text);
      expect(warm.reads).toEqual([]);
      for (const foreign of [otherSpace, noSuchSpace]) {
        const answer = JSON.parse((await post(query, foreign)).text);
        expect(answer.data).toEqual({ space: null });
        expect(answer.errors[0].extensions.code).toBe('SPACE_NOT_FOUND');
      }
    });

    it('stops serving a cached answer of a space once it is made private', async () => {
      const spaces = t.app.get(SpacesService);
      const query = `{ space(id: ${PUBLIC}) { name } }`;
      try {
        expect(JSON.parse((await post(query, own)).text).data.space.name).toBe('Open');
        expect((await readsOf(query, own)).reads).toEqual([]); // cached
        expect(await spaces.setPrivate(PUBLIC, true)).toBe(true);
        const answer = JSON.parse((await post(query, own)).text);
        expect(answer.data).toEqual({ space: null });
        expect(answer.errors[0].extensions.code).toBe('SPACE_NOT_FOUND');
        // Its own tokens still read it.
        expect(JSON.parse((await post(query, otherSpace)).text).data.space.name).toBe('Open');
      } finally {
        await spaces.setPrivate(PUBLIC, false);
      }
      expect(JSON.parse((await post(query, own)).text).data.space.name).toBe('Open');
    });

    it('stops answering on another instance within its half second of space reuse', async () => {
      // This instance has the space in its response cache (1 s) and its space reuse (500 ms).
      const query = `{ space(id: ${PUBLIC}) { name } }`;
      expect(JSON.parse((await post(query, own)).text).data.space.name).toBe('Open');
      const other = await startTestApp(kind, {}, t.db);
      try {
        expect(await other.app.get(SpacesService).setPrivate(PUBLIC, true)).toBe(true);
        const changed = Date.now();
        let space: unknown = 'not asked';
        while (space !== null && Date.now() - changed < 3000) {
          space = JSON.parse((await post(`${query} # ${Date.now()}`, own)).text).data.space;
          if (space !== null) await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(space).toBeNull();
        // Distinct bodies: only the 500 ms of space reuse (and the clock) stand between.
        expect(Date.now() - changed).toBeLessThan(1000);
      } finally {
        await other.app.get(SpacesService).setPrivate(PUBLIC, false);
        await other.app.close();
      }
    });

    it('keeps an answer that is tied to no token out of the cache', async () => {
      // Our gate always names the token; a wiring that did not must not share answers at all.
      for (const [vary, cached] of [
        ['', false],
        ['token-1', true],
      ] as const) {
        const fastify = Fastify();
        let runs = 0;
        installResponseCache(fastify, {
          path: '/query',
          maxAgeMs: 1000,
          maxEntries: 10,
          maxEntryBytes: 10_000,
          maxTotalBytes: 100_000,
          version: () => 0,
          varyBy: () => vary,
        });
        fastify.post('/query', () => ({ data: { run: ++runs } }));
        try {
          const answers: unknown[] = [];
          for (let i = 0; i < 2; i++) {
            const response = await fastify.inject({
              method: 'POST',
              url: '/query',
              headers: { 'content-type': 'application/json' },
              payload: '{"query":"{ space(id: 3) { name } }"}',
            });
            answers.push(response.json());
          }
          expect(answers).toEqual(
            cached
              ? [{ data: { run: 1 } }, { data: { run: 1 } }]
              : [{ data: { run: 1 } }, { data: { run: 2 } }],
          );
        } finally {
          await fastify.close();
        }
      }
    });
  });
});
