import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import {
  GraphQLArgumentConfig,
  GraphQLFieldConfig,
  GraphQLNonNull,
  GraphQLSchema,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { GALXE_EXTENSION, PRODUCT_EXTENSION } from './extension-field.decorator';

/**
 * The schemas one code-first schema is served as (docs/api.md, Schema profiles):
 * - `spec`: exactly the base contract, every extension hidden (what STRICT_MODE=true was);
 * - `extended`: the base contract and the product's extensions (the default);
 * - `galxe`: extended, plus what clients written against Galxe's API send (docs/galxe-compatibility.md).
 */
export const SCHEMA_PROFILES = ['spec', 'extended', 'galxe'] as const;
export type SchemaProfile = (typeof SCHEMA_PROFILES)[number];

/** What an argument of the full schema becomes outside the `galxe` profile. */
export type OutsideGalxe = 'absent' | 'required';

export interface GalxeArgument {
  type: string;
  field: string;
  argument: string;
  outside: OutsideGalxe;
}

/**
 * The arguments that differ under the `galxe` profile, as the code declares them (Galxe's form).
 * Fields carry their profile in their GraphQL extensions (GalxeField), but Nest's @Args cannot:
 * arguments are listed here by name, and a row that names no argument of the schema stops the
 * service at start (see applySchemaProfile), so a rename cannot leave this table stale.
 */
export const GALXE_ARGUMENTS: readonly GalxeArgument[] = [
  // Galxe: space(id: Int, alias: String); the base contract: space(id: Int!).
  { type: 'Query', field: 'space', argument: 'id', outside: 'required' },
  { type: 'Query', field: 'space', argument: 'alias', outside: 'absent' },
  { type: 'Space', field: 'loyaltyPointsRanks', argument: 'order', outside: 'absent' },
];

/**
 * The `transformSchema` of a GraphQL module serving `profile`. The code declares the widest
 * schema (galxe); the other profiles remove the fields marked beyond them, rewrite the arguments
 * of {@link GALXE_ARGUMENTS}, and drop the types nothing reaches any more.
 */
export function applySchemaProfile(
  profile: SchemaProfile,
): (schema: GraphQLSchema) => GraphQLSchema {
  return (schema) => {
    checkGalxeArguments(schema);
    if (profile === 'galxe') return schema;
    const hidden = profile === 'spec' ? [GALXE_EXTENSION, PRODUCT_EXTENSION] : [GALXE_EXTENSION];
    const narrowed = mapSchema(schema, {
      [MapperKind.OBJECT_FIELD]: (fieldConfig, fieldName, typeName) =>
        hidden.some((marker) => fieldConfig.extensions?.[marker])
          ? null
          : withoutGalxeArguments(fieldConfig, typeName, fieldName),
    });
    return pruneSchema(narrowed);
  };
}

/**
 * The `spec` profile: removes every extension, leaving exactly the base schema of docs/api.md.
 * The same as `applySchemaProfile('spec')`, kept for hosts that pass it as `transformSchema`.
 */
export function stripProductExtensions(schema: GraphQLSchema): GraphQLSchema {
  return applySchemaProfile('spec')(schema);
}

function withoutGalxeArguments(
  fieldConfig: GraphQLFieldConfig<unknown, unknown>,
  typeName: string,
  fieldName: string,
): GraphQLFieldConfig<unknown, unknown> {
  const rows = GALXE_ARGUMENTS.filter((row) => row.type === typeName && row.field === fieldName);
  if (rows.length === 0) return fieldConfig;
  const args: Record<string, GraphQLArgumentConfig> = {};
  for (const [name, arg] of Object.entries(fieldConfig.args ?? {})) {
    const row = rows.find((r) => r.argument === name);
    if (row?.outside === 'absent') continue;
    args[name] =
      row?.outside === 'required' && !isNonNullType(arg.type)
        ? { ...arg, type: new GraphQLNonNull(arg.type) }
        : arg;
  }
  return { ...fieldConfig, args };
}

/** Every row of GALXE_ARGUMENTS names an argument the code declares, nullable where it must be. */
function checkGalxeArguments(schema: GraphQLSchema): void {
  for (const row of GALXE_ARGUMENTS) {
    const type = schema.getType(row.type);
    const field = isObjectType(type) ? type.getFields()[row.field] : undefined;
    const arg = field?.args.find((a) => a.name === row.argument);
    if (!arg || (row.outside === 'required' && isNonNullType(arg.type)))
      throw new Error(
        `Schema profiles: ${row.type}.${row.field}(${row.argument}) is listed in GALXE_ARGUMENTS ` +
          `but the schema declares ${arg ? `it as ${String(arg.type)}` : 'no such argument'}`,
      );
  }
}
