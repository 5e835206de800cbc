import { GraphQLSchemaHost } from '@nestjs/graphql';
import {
  buildSchema,
  GraphQLObjectType,
  GraphQLSchema,
  isObjectType,
  lexicographicSortSchema,
  printSchema,
} from 'graphql';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../utils/test-app';

const TYPE_REF = 'kind name ofType { kind name ofType { kind name ofType { kind name } } }';
const INTROSPECT = `{ __schema { types { name kind
  fields(includeDeprecated: true) { name type { ${TYPE_REF} } args(includeDeprecated: true) { name isDeprecated deprecationReason type { ${TYPE_REF} } } }
  enumValues { name } } } }`;

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}

/** Renders an introspected type the way SDL writes it: [Foo!]! */
function sdl(type: TypeRef): string {
  if (type.kind === 'NON_NULL') return `${sdl(type.ofType!)}!`;
  if (type.kind === 'LIST') return `[${sdl(type.ofType!)}]`;
  return type.name!;
}

type Introspected = Array<{
  name: string;
  kind: string;
  fields: Array<{
    name: string;
    type: TypeRef;
    args: Array<{
      name: string;
      isDeprecated: boolean;
      deprecationReason: string | null;
      type: TypeRef;
    }>;
  }> | null;
  enumValues: Array<{ name: string }> | null;
}>;

async function introspect(t: TestApp): Promise<Map<string, Introspected[number]>> {
  const response = await t.gql(INTROSPECT);
  expect(response.body.errors).toBeUndefined();
  return new Map(
    (response.body.data.__schema.types as Introspected).map((type) => [type.name, type]),
  );
}

function fieldsOf(types: Map<string, Introspected[number]>, name: string): Record<string, string> {
  const type = types.get(name);
  if (!type) throw new Error(`type ${name} is missing`);
  return Object.fromEntries(type.fields!.map((f) => [f.name, sdl(f.type)]));
}

function argsOf(types: Map<string, Introspected[number]>, typeName: string, field: string) {
  const found = types.get(typeName)!.fields!.find((f) => f.name === field)!;
  return Object.fromEntries(
    found.args.map((a) => [
      a.name,
      { type: sdl(a.type), deprecated: a.isDeprecated, reason: a.deprecationReason },
    ]),
  );
}

describe('the GraphQL schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t?.close());

  it('has exactly the specified types for every field and argument', async () => {
    const types = await introspect(t);
    expect(fieldsOf(types, 'Query')).toEqual({
      space: 'Space',
      quest: 'Quest',
      spaceLoyaltyPointsRanks: 'LoyaltyPointsRanks',
    });
    expect(argsOf(types, 'Query', 'space')).toEqual({
      id: { type: 'Int!', deprecated: false, reason: null },
    });
    expect(argsOf(types, 'Query', 'quest')).toEqual({
      id: { type: 'ID!', deprecated: false, reason: null },
    });
    expect(argsOf(types, 'Query', 'spaceLoyaltyPointsRanks')).toEqual({
      spaceId: { type: 'Int!', deprecated: false, reason: null },
      sprintId: { type: 'Int', deprecated: false, reason: null },
      cursorAfter: { type: 'String', deprecated: false, reason: null },
    });
    expect(fieldsOf(types, 'Space')).toMatchObject({
      id: 'String!',
      name: 'String!',
      description: 'String',
      loyaltyPointsRanks: 'LoyaltyPointsRanks',
    });
    const boardArgs = argsOf(types, 'Space', 'loyaltyPointsRanks');
    expect(boardArgs).toMatchObject({
      cursorAfter: { type: 'String', deprecated: false },
      cursorBefore: { type: 'String', deprecated: false },
      sprintId: { type: 'Int', deprecated: false },
      first: { type: 'Int', deprecated: true },
      after: { type: 'String', deprecated: true },
    });
    for (const name of ['first', 'after']) {
      expect(boardArgs[name].reason).toMatch(/cursorAfter/);
      expect(boardArgs[name].reason).toMatch(/cursorBefore/);
    }
    expect(fieldsOf(types, 'LoyaltyPointsRanks')).toMatchObject({
      totalCount: 'Int!',
      pageInfo: 'PageInfo!',
      list: '[LoyaltyPointsRank!]!',
    });
    expect(fieldsOf(types, 'PageInfo')).toMatchObject({
      hasNextPage: 'Boolean!',
      endCursor: 'String',
    });
    expect(fieldsOf(types, 'LoyaltyPointsRank')).toMatchObject({
      rank: 'Int!',
      points: 'Int!',
      address: 'Address',
    });
    expect(fieldsOf(types, 'Address')).toMatchObject({
      username: 'String',
      address: 'String!',
      avatar: 'String',
    });
    expect(fieldsOf(types, 'Quest')).toMatchObject({
      name: 'String!',
      status: 'QuestStatus!',
      participantsCount: 'Int!',
    });
    expect(
      types
        .get('QuestStatus')!
        .enumValues!.map((v) => v.name)
        .sort(),
    ).toEqual(['Active', 'CapReached', 'Deleted', 'Draft', 'Expired', 'NotStarted']);
  });

  it('has the extensions beyond the specification', async () => {
    const types = await introspect(t);
    expect(fieldsOf(types, 'LoyaltyPointsRanks').edges).toBe('[LoyaltyPointsRankEdge!]!');
    expect(fieldsOf(types, 'LoyaltyPointsRankEdge')).toEqual({
      cursor: 'String!',
      node: 'LoyaltyPointsRank!',
    });
    expect(fieldsOf(types, 'PageInfo')).toMatchObject({
      startCursor: 'String',
      hasPreviousPage: 'Boolean!',
    });
    expect(fieldsOf(types, 'LoyaltyPointsRank').id).toBe('ID!');
    expect(fieldsOf(types, 'Address').id).toBe('ID!');
    expect(fieldsOf(types, 'Space')).toMatchObject({
      addressLoyaltyPoints: 'LoyaltyPointsRank',
      sprints: '[Sprint!]!',
    });
    expect(argsOf(types, 'Space', 'addressLoyaltyPoints')).toMatchObject({
      address: { type: 'String!' },
      sprintId: { type: 'Int' },
    });
    expect(fieldsOf(types, 'Sprint')).toEqual({
      id: 'Int!',
      name: 'String!',
      startTime: 'String!',
      endTime: 'String!',
    });
    expect(fieldsOf(types, 'Quest')).toMatchObject({
      id: 'ID!',
      type: 'String',
      startTime: 'String',
      endTime: 'String',
      cap: 'Int',
    });
  });

  it('runs queries without per-field plugin hooks (Apollo would wrap every field)', async () => {
    const response = await t.gql('{ space(id: 1) { loyaltyPointsRanks { list { rank } } } }');
    expect(response.status).toBe(200);
    // Apollo marks the schema when a plugin's willResolveField makes it wrap every resolver: a
    // cost on every field of every request (its default cache-control plugin did).
    const marks = Object.getOwnPropertySymbols(t.app.get(GraphQLSchemaHost).schema).map(
      (symbol) => symbol.description,
    );
    expect(marks).not.toContain('apolloServerPluginsEnabled');
  });

  it('answers no field suggestions', async () => {
    const response = await t.gql('{ spac(id: 1) { id } }');
    expect(response.status).toBe(400);
    expect(response.body.errors[0].message).not.toMatch(/Did you mean/);
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      category: 'VALIDATION',
      http_status: 400,
    });
  });
});

/** The SDL a running app serves, sorted, as the `schema` command prints it. */
const servedSdl = (t: TestApp) =>
  `${printSchema(lexicographicSortSchema(t.app.get(GraphQLSchemaHost).schema))}\n`;

describe.each([
  ['extended', 'by default', 'schema.gql', {}],
  ['spec', 'SCHEMA_PROFILE=spec', 'schema.spec.gql', { SCHEMA_PROFILE: 'spec' }],
  ['spec', 'STRICT_MODE=true', 'schema.spec.gql', { STRICT_MODE: 'true' }],
  ['galxe', 'SCHEMA_PROFILE=galxe', 'schema.galxe.gql', { SCHEMA_PROFILE: 'galxe' }],
])('the %s profile (%s)', (_profile, _how, file, env: Record<string, string>) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', env);
  });
  afterAll(() => t?.close());

  it(`serves exactly the committed, sorted ${file} (run \`npm run schema\` after a change)`, () => {
    expect(servedSdl(t)).toBe(readFileSync(join(__dirname, '..', '..', file), 'utf8'));
  });
});

describe('the committed schemas of the three profiles', () => {
  const sdlOf = (file: string) => readFileSync(join(__dirname, '..', '..', file), 'utf8');

  it('nest: spec within extended within galxe, every type and field kept as it was', () => {
    const [spec, extended, galxe] = ['schema.spec.gql', 'schema.gql', 'schema.galxe.gql'].map(
      (file) => buildSchema(sdlOf(file)),
    );
    // Fields and their types; arguments may differ only where GALXE_ARGUMENTS says.
    const fieldsOf = (schema: GraphQLSchema) =>
      Object.values(schema.getTypeMap())
        .filter((type) => isObjectType(type) && !type.name.startsWith('__'))
        .flatMap((type) =>
          Object.values((type as GraphQLObjectType).getFields()).map(
            (field) => `${type.name}.${field.name}: ${String(field.type)}`,
          ),
        );
    for (const [narrow, wide] of [
      [spec, extended],
      [extended, galxe],
    ])
      expect(fieldsOf(wide)).toEqual(expect.arrayContaining(fieldsOf(narrow)));
    expect(String(extended.getQueryType()!.getFields().space.args[0].type)).toBe('Int!');
    expect(
      galxe
        .getQueryType()!
        .getFields()
        .space.args.map((arg) => `${arg.name}: ${String(arg.type)}`),
    ).toEqual(['alias: String', 'id: Int']);
  });
});

describe('the spec profile (STRICT_MODE=true)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { STRICT_MODE: 'true' });
    await t.load([
      { type: 'space', id: 1, name: 'One' },
      {
        type: 'points',
        key: 'a',
        spaceId: 1,
        address: '0xA',
        points: 5,
        occurredAt: '2026-01-01T00:00:00Z',
      },
    ]);
  });
  afterAll(() => t?.close());

  it('hides every extension, leaving exactly the specified schema', async () => {
    const types = await introspect(t);
    expect(fieldsOf(types, 'Space')).toEqual({
      id: 'String!',
      name: 'String!',
      description: 'String',
      loyaltyPointsRanks: 'LoyaltyPointsRanks',
    });
    expect(fieldsOf(types, 'LoyaltyPointsRanks')).toEqual({
      totalCount: 'Int!',
      pageInfo: 'PageInfo!',
      list: '[LoyaltyPointsRank!]!',
    });
    expect(fieldsOf(types, 'PageInfo')).toEqual({ hasNextPage: 'Boolean!', endCursor: 'String' });
    expect(fieldsOf(types, 'LoyaltyPointsRank')).toEqual({
      rank: 'Int!',
      points: 'Int!',
      address: 'Address',
    });
    expect(fieldsOf(types, 'Address')).toEqual({
      username: 'String',
      address: 'String!',
      avatar: 'String',
    });
    expect(fieldsOf(types, 'Quest')).toEqual({
      name: 'String!',
      status: 'QuestStatus!',
      participantsCount: 'Int!',
    });
    expect(types.has('Sprint')).toBe(false);
    expect(types.has('LoyaltyPointsRankEdge')).toBe(false);
  });

  it('still answers the spec queries, and refuses an extension as an unknown field', async () => {
    const ok = await t.gql(
      '{ space(id: 1) { name loyaltyPointsRanks { totalCount list { rank points address { address } } } } }',
    );
    expect(ok.body).toEqual({
      data: {
        space: {
          name: 'One',
          loyaltyPointsRanks: {
            totalCount: 1,
            list: [{ rank: 1, points: 5, address: { address: '0xA' } }],
          },
        },
      },
    });
    const hidden = await t.gql(
      '{ space(id: 1) { addressLoyaltyPoints(address: "0xA") { rank } } }',
    );
    expect(hidden.status).toBe(400);
    expect(hidden.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('with introspection turned off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { INTROSPECTION: 'false' });
  });
  afterAll(() => t?.close());

  it('refuses __schema but serves queries', async () => {
    const response = await t.gql('{ __schema { types { name } } }');
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.category).toBe('VALIDATION');
    expect((await t.gql('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
  });
});
