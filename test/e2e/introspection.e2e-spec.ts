import { getIntrospectionQuery } from 'graphql';
import { DB_KINDS } from '../utils/test-databases';
import { GqlResponse, startTestApp, TestApp } from '../utils/test-app';

/** The standard introspection query split into its `__schema { ... }` selection and fragments. */
const STANDARD = getIntrospectionQuery({ descriptions: true });
const SCHEMA_SELECTION = STANDARD.slice(
  STANDARD.indexOf('__schema'),
  STANDARD.lastIndexOf('}', STANDARD.indexOf('fragment FullType')),
);
const FRAGMENTS = STANDARD.slice(STANDARD.indexOf('fragment FullType'));

function expectTooCostly(response: GqlResponse, message: RegExp): void {
  expect(response.status).toBe(400);
  expect(response.body.data).toBeUndefined();
  expect(response.body.errors).toEqual([
    {
      message: expect.stringMatching(message),
      extensions: {
        code: 'QUERY_TOO_COSTLY',
        category: 'VALIDATION',
        http_status: 400,
        request_id: expect.any(String),
        timestamp: expect.any(String),
      },
    },
  ]);
}

describe.each(DB_KINDS)('introspection under the query limits on %s', (kind) => {
  let t: TestApp;

  // The default limits: 30 aliases and a cost of 20,000.
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t?.close());

  it('answers the standard introspection query of GraphiQL and code generators', async () => {
    for (const query of [getIntrospectionQuery(), STANDARD]) {
      const response = await t.gql(query);
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
      const names = (response.body.data.__schema.types as Array<{ name: string }>).map(
        (type) => type.name,
      );
      expect(names).toEqual(expect.arrayContaining(['Query', 'Space', 'LoyaltyPointsRanks']));
    }
    const one = await t.gql('{ __type(name: "Space") { name fields { name } } }');
    expect(one.status).toBe(200);
    expect(one.body.data.__type.name).toBe('Space');
  });

  it('refuses 30 aliased copies of the schema with 400 in the envelope, before answering any', async () => {
    const thirty = `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: ${SCHEMA_SELECTION}`).join(' ')} } ${FRAGMENTS}`;
    const response = await t.gql(thirty);
    expectTooCostly(response, /^Query is too costly: 30 __schema selections, at most 1$/);
    expect(JSON.stringify(response.body).length).toBeLessThan(1000);
    // Two copies are as needless as thirty.
    expectTooCostly(
      await t.gql(`{ a: __schema { queryType { name } } b: __schema { queryType { name } } }`),
      /2 __schema selections, at most 1/,
    );
    expectTooCostly(
      await t.gql(
        `{ ${Array.from({ length: 11 }, (_, i) => `t${i}: __type(name: "Space") { name }`).join(' ')} }`,
      ),
      /11 __type selections, at most 10/,
    );
  });

  it('counts copies made by aliases inside one __schema against the cost limit', async () => {
    const copies = Array.from({ length: 8 }, (_, i) => `t${i}: types { ...FullType }`).join(' ');
    expectTooCostly(
      await t.gql(`{ __schema { ${copies} } } ${FRAGMENTS}`),
      /^Query is too costly: cost \d+, at most 20000$/,
    );
    // One such copy is the schema's own size, and is answered.
    const single = await t.gql(`{ __schema { types { ...FullType } } } ${FRAGMENTS}`);
    expect(single.status).toBe(200);
    expect(single.body.data.__schema.types.length).toBeGreaterThan(10);
  });
});
