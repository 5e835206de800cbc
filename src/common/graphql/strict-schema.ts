import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { PRODUCT_EXTENSION } from './extension-field.decorator';

/**
 * Strict mode: removes every field marked with {@link ExtensionField} and the types only they
 * used, leaving exactly the base schema of docs/api.md. Pass it as the GraphQL module's
 * `transformSchema`.
 */
export function stripProductExtensions(schema: GraphQLSchema): GraphQLSchema {
  const stripped = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (fieldConfig) =>
      fieldConfig.extensions?.[PRODUCT_EXTENSION] ? null : fieldConfig,
  });
  return pruneSchema(stripped);
}
