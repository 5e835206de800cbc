import { buildSchema, printSchema } from 'graphql';
import { GALXE_EXTENSION, PRODUCT_EXTENSION } from './extension-field.decorator';
import { applySchemaProfile, stripProductExtensions } from './schema-profile';

/** A schema in the code's form (galxe's): its marked fields carry their extension. */
function fullSchema(sdl = FULL) {
  const schema = buildSchema(sdl);
  const mark = (type: string, field: string, marker: string) => {
    const found = (
      schema.getType(type) as unknown as {
        getFields(): Record<string, { extensions: object }>;
      }
    ).getFields()[field];
    found.extensions = { ...found.extensions, [marker]: true };
  };
  mark('Space', 'sprints', PRODUCT_EXTENSION);
  mark('Space', 'alias', GALXE_EXTENSION);
  mark('Query', 'campaigns', GALXE_EXTENSION);
  return schema;
}

const FULL = `
  type Query { space(id: Int, alias: String): Space campaigns(input: Filter!): [Campaign!]! }
  type Space {
    id: String!
    alias: String
    sprints: [Sprint!]!
    loyaltyPointsRanks(order: Order, first: Int): Int
  }
  type Sprint { id: Int! }
  type Campaign { id: ID! }
  input Filter { first: Int }
  enum Order { Points GalxeID }
`;

describe('applySchemaProfile', () => {
  it('serves the code as it is under galxe', () => {
    const schema = fullSchema();
    expect(applySchemaProfile('galxe')(schema)).toBe(schema);
  });

  it('removes galxe fields and arguments under extended, and the types only they reached', () => {
    expect(printSchema(applySchemaProfile('extended')(fullSchema()))).toBe(
      printSchema(
        buildSchema(`
          type Query { space(id: Int!): Space }
          type Space { id: String! sprints: [Sprint!]! loyaltyPointsRanks(first: Int): Int }
          type Sprint { id: Int! }
        `),
      ),
    );
  });

  it('removes the extensions too under spec, as stripProductExtensions always did', () => {
    const expected = printSchema(
      buildSchema(`
        type Query { space(id: Int!): Space }
        type Space { id: String! loyaltyPointsRanks(first: Int): Int }
      `),
    );
    expect(printSchema(applySchemaProfile('spec')(fullSchema()))).toBe(expected);
    expect(printSchema(stripProductExtensions(fullSchema()))).toBe(expected);
  });

  it.each([
    [
      'an argument the schema does not declare',
      FULL.replace('alias: String)', ')'),
      'Query.space(alias) is listed in GALXE_ARGUMENTS but the schema declares no such argument',
    ],
    [
      'a required argument already non-null',
      FULL.replace('space(id: Int,', 'space(id: Int!,'),
      'Query.space(id) is listed in GALXE_ARGUMENTS but the schema declares it as Int!',
    ],
  ])('stops at start when the table names %s', (_case, sdl, message) => {
    for (const profile of ['spec', 'extended', 'galxe'] as const)
      expect(() => applySchemaProfile(profile)(fullSchema(sdl))).toThrow(
        `Schema profiles: ${message}`,
      );
  });
});
