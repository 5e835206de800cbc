import { Kind, parse, OperationDefinitionNode } from 'graphql';
import { analyzeOperation } from './query-analysis';

const shape = (query: string, variables: Record<string, unknown> = {}) => {
  const document = parse(query);
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
  return analyzeOperation(document, operation, variables);
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

  it('survives cyclic fragments (validation reports them)', () => {
    expect(shape('{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }').cost).toBe(
      0,
    );
  });
});
