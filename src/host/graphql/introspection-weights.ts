import {
  GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
} from 'graphql';

/**
 * The items each introspection list holds, on average, in one schema, by field name (the list
 * fields of `__Schema`, `__Type`, `__Field` and `__Directive` have distinct names, but `args`, which
 * is averaged over fields and directives together). A list absent here counts one item.
 */
export type IntrospectionWeights = Readonly<Record<string, number>>;

const cache = new WeakMap<GraphQLSchema, IntrospectionWeights>();

/**
 * What an introspection answer of `schema` holds, so its cost is its size: `types` is the
 * number of types, `fields` the fields of an average type (`types { fields }` is then every field
 * of the schema), and so on. Computed once per schema.
 */
export function introspectionWeights(schema: GraphQLSchema): IntrospectionWeights {
  const known = cache.get(schema);
  if (known) return known;
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  let fields = 0;
  let fieldArgs = 0;
  let inputFields = 0;
  let enumValues = 0;
  let interfaces = 0;
  let possibleTypes = 0;
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const own = Object.values(type.getFields());
      fields += own.length;
      fieldArgs += own.reduce((sum, field) => sum + field.args.length, 0);
      interfaces += type.getInterfaces().length;
    }
    if (isInterfaceType(type) || isUnionType(type))
      possibleTypes += schema.getPossibleTypes(type).length;
    if (isInputObjectType(type)) inputFields += Object.keys(type.getFields()).length;
    if (isEnumType(type)) enumValues += type.getValues().length;
  }
  const directiveArgs = directives.reduce((sum, directive) => sum + directive.args.length, 0);
  const locations = directives.reduce((sum, directive) => sum + directive.locations.length, 0);
  const perType = (count: number) => count / Math.max(1, types.length);
  const weights: IntrospectionWeights = {
    types: types.length,
    directives: directives.length,
    fields: perType(fields),
    inputFields: perType(inputFields),
    enumValues: perType(enumValues),
    interfaces: perType(interfaces),
    possibleTypes: perType(possibleTypes),
    args: (fieldArgs + directiveArgs) / Math.max(1, fields + directives.length),
    locations: locations / Math.max(1, directives.length),
  };
  cache.set(schema, weights);
  return weights;
}
