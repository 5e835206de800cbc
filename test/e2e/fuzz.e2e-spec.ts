import fc from 'fast-check';
import { ERROR_DEFINITIONS } from '../../src/common/errors/error-code';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

/** Codes a client may see: ours (but never an internal error) and GraphQL's request errors. */
const KNOWN_CODES = new Set([
  ...Object.keys(ERROR_DEFINITIONS).filter((code) => code !== 'INTERNAL_SERVER_ERROR'),
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);
const CATEGORIES = new Set([
  'AUTHENTICATION',
  'RATE_LIMIT',
  'NOT_FOUND',
  'VALIDATION',
  'UNAVAILABLE',
]);

const anyValue = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 30 }),
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom('', '-1', '0', '999999999999999999999', 'WzEsMSwwXQ.AAAA', '1.5', '0x1'),
);
const argument = (name: string) => anyValue.map((value) => `${name}: ${JSON.stringify(value)}`);
const maybe = (arb: fc.Arbitrary<string>) => fc.option(arb, { nil: '' });

const entry = fc
  .subarray(['rank', 'points', 'id', 'address { address username avatar id }', '__typename'], {
    minLength: 1,
  })
  .map((fields) => fields.join(' '));
const board = fc
  .tuple(
    maybe(argument('cursorAfter')),
    maybe(argument('cursorBefore')),
    maybe(argument('sprintId')),
    maybe(argument('first')),
    maybe(argument('after')),
    entry,
  )
  .map(([a, b, c, d, e, fields]) => {
    const args = [a, b, c, d, e].filter(Boolean).join(', ');
    return `loyaltyPointsRanks${args ? `(${args})` : ''} { totalCount pageInfo { hasNextPage endCursor startCursor hasPreviousPage } list { ${fields} } edges { cursor node { rank } } }`;
  });
const spaceQuery = fc
  .tuple(
    fc.integer({ min: -3, max: 4 }),
    fc.option(board, { nil: undefined }),
    fc.option(argument('address'), { nil: undefined }),
  )
  .map(
    ([id, page, address]) =>
      `{ space(id: ${id}) { id name description sprints { id startTime } ${page ?? ''} ${address ? `addressLoyaltyPoints(${address}) { rank points }` : ''} } }`,
  );
const rootBoard = fc
  .tuple(anyValue, maybe(argument('sprintId')), maybe(argument('cursorAfter')))
  .map(
    ([spaceId, s, c]) =>
      `{ spaceLoyaltyPointsRanks(spaceId: ${JSON.stringify(spaceId)}${s ? `, ${s}` : ''}${c ? `, ${c}` : ''}) { totalCount list { rank } } }`,
  );
const questQuery = anyValue.map(
  (id) =>
    `{ quest(id: ${JSON.stringify(id)}) { id name status participantsCount type startTime endTime cap } }`,
);
const withVariables = fc.record({
  query: fc.constant(
    'query($id: Int!, $s: Int, $c: String, $f: Int) { space(id: $id) { loyaltyPointsRanks(sprintId: $s, cursorAfter: $c, first: $f) { list { rank } } } }',
  ),
  variables: fc.dictionary(fc.constantFrom('id', 's', 'c', 'f', 'x'), anyValue),
});
const validish = fc.oneof(spaceQuery, rootBoard, questQuery).map((query) => ({ query }));
/** Valid queries cut or mangled at a random place, and random text. */
const broken = fc.oneof(
  fc
    .tuple(fc.oneof(spaceQuery, rootBoard), fc.nat())
    .map(([q, n]) => ({ query: q.slice(0, n % (q.length + 1)) })),
  fc.tuple(spaceQuery, fc.nat(), fc.string({ maxLength: 5 })).map(([q, n, junk]) => {
    const at = n % (q.length + 1);
    return { query: q.slice(0, at) + junk + q.slice(at) };
  }),
  fc.string({ maxLength: 200 }).map((query) => ({ query })),
);
const otherOperations = fc
  .constantFrom('mutation { x }', 'subscription { x }', 'mutation M { space(id: 1) { id } }')
  .map((query) => ({ query }));
const oddBodies = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record({ query: anyValue, variables: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ query: fc.constant('{ __typename }'), operationName: anyValue }),
);
const body = fc.oneof(
  { weight: 4, arbitrary: validish },
  { weight: 2, arbitrary: withVariables },
  { weight: 3, arbitrary: broken },
  { weight: 1, arbitrary: oddBodies },
  { weight: 1, arbitrary: otherOperations },
);

describe.each(DB_KINDS)('random requests on %s', (kind) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(kind);
    await t.load([
      { type: 'space', id: 1, name: 'Fuzz' },
      {
        type: 'sprint',
        id: 1,
        spaceId: 1,
        name: 'S',
        startTime: '2026-01-01T00:00:00Z',
        endTime: '2026-02-01T00:00:00Z',
      },
      { type: 'quest', id: '1', spaceId: 1, name: 'Q', status: 'Active' },
      ...Array.from({ length: 30 }, (_, i) => ({
        type: 'points',
        key: `f${i}`,
        spaceId: 1,
        address: `0xF${i}`,
        points: (i % 7) + 1,
        occurredAt: '2026-01-15T00:00:00Z',
      })),
    ]);
  });
  afterAll(() => t?.close());

  it('never answers 5xx, and every error is in the envelope with a known code', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const response = await fetch(t.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': t.token },
          body: JSON.stringify(payload),
        });
        const text = await response.text();
        expect(response.status).toBeLessThan(500);
        const parsed = JSON.parse(text) as {
          data?: unknown;
          errors?: Array<{ message: unknown; extensions: Record<string, unknown> }>;
        };
        expect(text).not.toMatch(/Did you mean|stacktrace|SELECT |QueryFailedError/);
        for (const error of parsed.errors ?? []) {
          expect(typeof error.message).toBe('string');
          expect(KNOWN_CODES.has(error.extensions.code as string)).toBe(true);
          expect(CATEGORIES.has(error.extensions.category as string)).toBe(true);
          expect(error.extensions.http_status).toEqual(expect.any(Number));
          expect(error.extensions.request_id).toBe(response.headers.get('x-request-id'));
          expect(Number.isNaN(Date.parse(error.extensions.timestamp as string))).toBe(false);
        }
        if (!parsed.errors) expect(parsed.data).toBeDefined();
      }),
      { numRuns: 1500, seed: Number(process.env.FUZZ_SEED ?? 20261121) },
    );
  });
});
