import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { PRODUCT_EXTENSION } from './extension-field.decorator';

/**
 * Strict mode: removes every field marked with {@link ExtensionField} and the types only they
 * used, leaving exactly the schema of SPEC.md. Pass it as `transformSchema` of the GraphQL module.
 */
export function stripProductExtensions(schema: GraphQLSchema): GraphQLSchema {
  const stripped = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (fieldConfig) =>
      fieldConfig.extensions?.[PRODUCT_EXTENSION] ? null : fieldConfig,
  });
  return pruneSchema(stripped);
}
