import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildSchema,
  getIntrospectionQuery,
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  OperationDefinitionNode,
} from 'graphql';
import { introspectionWeights } from './introspection-weights';
import { analyzeOperation, READ_COSTS } from './query-analysis';

/** The schema the service serves (the committed schema.gql), introspection types included. */
const schema = buildSchema(readFileSync(join(__dirname, '../../../schema.gql'), 'utf8'));

const shape = (query: string, variables: Record<string, unknown> = {}) => {
  const document = parse(query);
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
  return analyzeOperation(document, operation, variables, introspectionWeights(schema));
};

describe('analyzeOperation', () => {
  const direct = '{ space(id: 1) { loyaltyPointsRanks(first: 1000) { list { rank points } } } }';

  it('weighs a page by its size, from the argument, a variable or its default', () => {
    const base = shape(direct).cost;
    expect(base).toBeGreaterThan(3000);
    expect(
      shape(
        'query($n: Int) { space(id: 1) { loyaltyPointsRanks(first: $n) { list { rank points } } } }',
        { n: 1000 },
      ).cost,
    ).toBe(base);
    expect(
      shape(
        'query($n: Int = 1000) { space(id: 1) { loyaltyPointsRanks(first: $n) { list { rank points } } } }',
      ).cost,
    ).toBe(base);
    expect(
      shape('{ space(id: 1) { loyaltyPointsRanks { list { rank points } } } }').cost,
    ).toBeLessThan(base / 10);
    expect(
      shape('{ space(id: 1) { loyaltyPointsRanks(first: 99999) { list { rank points } } } }').cost,
    ).toBe(base);
  });

  it("weighs a galxe campaign list by its input's first, and what each campaign's space reads", () => {
    const list = (input: string) =>
      `query($i: ListCampaignInput!) { campaigns(input: ${input}) { list { id space { loyaltyPointsRanks(first: 1000) { list { rank } } } } } }`;
    const hundred = shape(list('$i'), { i: { spaceId: '1', first: 100 } }).cost;
    // A board page of 1000 under each of 100 campaigns: far beyond the default MAX_QUERY_COST.
    expect(hundred).toBeGreaterThan(100 * 1000);
    expect(shape(list('{ spaceId: 1, first: 100 }')).cost).toBe(hundred);
    expect(shape(list('{ spaceId: 1, first: 5000 }')).cost).toBe(hundred);
    expect(shape(list('$i'), { i: { spaceId: '1' } }).cost).toBe(
      shape(list('{ spaceId: 1, first: 20 }')).cost,
    );
  });

  it('weighs each campaign list by the quests it reads, so lists nested in lists cost their reads', () => {
    // Galxe's own CampaignList example: one list of 2, well under the default MAX_QUERY_COST.
    const single = shape(
      'query($c: ListCampaignInput!) { space(alias: "x") { id name alias campaigns(input: $c) { pageInfo { endCursor hasNextPage } list { id name } } } }',
      { c: { first: 2, after: '-1' } },
    ).cost;
    expect(single).toBeGreaterThan(READ_COSTS.campaigns);
    expect(single).toBeLessThan(2 * READ_COSTS.campaigns);
    // 1 + 100 + 100 x 40 lists, each reading the space's quests: refused by the default limit.
    const nested = shape(
      '{ campaigns(input: { spaceId: "1", first: 100 }) { list { space { campaigns(input: { first: 40 }) { list { space { campaigns(input: { first: 1 }) { totalCount } } } } } } } }',
    ).cost;
    expect(nested).toBeGreaterThan(4_000 * READ_COSTS.campaigns);
    expect(nested).toBeGreaterThan(20_000);
  });

  it('counts fragments exactly as the fields they stand for', () => {
    const base = shape(direct);
    expect(
      shape(
        '{ space(id: 1) { loyaltyPointsRanks(first: 1000) { ... on LoyaltyPointsRanks { list { rank points } } } } }',
      ),
    ).toEqual(base);
    expect(
      shape(
        '{ space(id: 1) { loyaltyPointsRanks(first: 1000) { ...P } } } fragment P on LoyaltyPointsRanks { list { rank points } }',
      ),
    ).toEqual(base);
    expect(
      shape(
        '{ ...Q } fragment Q on Query { space(id: 1) { loyaltyPointsRanks(first: 1000) { list { rank points } } } }',
      ),
    ).toEqual(base);
  });

  it('counts aliases everywhere, introspection included, and depth outside it', () => {
    expect(shape('{ a: __typename b: space(id: 1) { c: name } }').aliases).toBe(3);
    expect(shape('{ __schema { a: types { b: name } } }')).toMatchObject({ aliases: 2, depth: 0 });
    expect(
      shape('{ space(id: 1) { loyaltyPointsRanks { edges { node { address { id } } } } } }').depth,
    ).toBe(6);
  });

  it('weighs introspection by what it answers from the schema', () => {
    const types = Object.values(schema.getTypeMap());
    const fields = types
      .filter((type) => isObjectType(type) || isInterfaceType(type))
      .reduce((sum, type) => sum + Object.keys(type.getFields()).length, 0);
    // __schema, types, then one name per type.
    expect(shape('{ __schema { types { name } } }').cost).toBe(2 + types.length);
    // ... and with their fields: every field of the schema, each with its name.
    const withFields = shape('{ __schema { types { name fields { name } } } }').cost;
    expect(withFields).toBeGreaterThanOrEqual(2 + 2 * types.length + fields);
    expect(withFields).toBeLessThanOrEqual(3 + 2 * types.length + fields);
    expect(shape('{ __type(name: "Space") { name } }').cost).toBe(2);
    // The standard query of GraphiQL and code generators fits the default limit (20,000).
    const standard = shape(getIntrospectionQuery({ descriptions: true })).cost;
    expect(standard).toBeGreaterThan(1000);
    expect(standard).toBeLessThan(20_000);
  });

  it('counts every aliased copy of an introspection answer, and a repeated key once', () => {
    const full = getIntrospectionQuery({ descriptions: true });
    const one = shape(full);
    const selection = full.slice(full.indexOf('__schema'), full.indexOf('fragment FullType'));
    const body = selection.slice(0, selection.lastIndexOf('}'));
    const fragments = full.slice(full.indexOf('fragment FullType'));
    const thirty = shape(
      `{ ${Array.from({ length: 30 }, (_, i) => `s${i}: ${body}`).join(' ')} } ${fragments}`,
    );
    expect(thirty.introspection).toEqual({ schema: 30, type: 0 });
    expect(thirty.cost).toBe(30 * one.cost);
    expect(
      shape(
        '{ __schema { queryType { name } } ...F } fragment F on Query { __schema { types { name } } }',
      ).introspection,
    ).toEqual({ schema: 1, type: 0 });
    expect(
      shape('{ a: __type(name: "Space") { name } b: __type(name: "Quest") { name } }')
        .introspection,
    ).toEqual({ schema: 0, type: 2 });
    const twice = shape('{ __schema { a: types { name } b: types { name } } }').cost;
    expect(twice).toBe(2 * shape('{ __schema { types { name } } }').cost - 1);
  });

  it('measures a document that spreads fragments exponentially at once', () => {
    const levels = 24;
    const chain = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    ).join(' ');
    const started = performance.now();
    const result = shape(
      `{ ...F0 } ${chain} fragment F${levels} on Query { space(id: 1) { name } }`,
    );
    expect(performance.now() - started).toBeLessThan(500);
    // Counted as if written in place: 2^24 copies of a field, far over any limit.
    expect(result.cost).toBe(2 * 2 ** levels);
  });

  it('survives cyclic fragments (validation reports them)', () => {
    expect(shape('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }').cost).toBe(
      0,
    );
  });
});
