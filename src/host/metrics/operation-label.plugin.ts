import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { GraphQLSchema, Kind, type OperationDefinitionNode } from 'graphql';
import { setOperation } from '../http/request-labels';

/** More root fields than this in one operation are labelled "multiple". */
const MAX_NAMED_FIELDS = 3;
const META_FIELDS = new Set(['__schema', '__type', '__typename']);

/**
 * The label of an operation: its root fields by name, sorted and unique ("space",
 * "quest,space"). Names come from the schema, never from the client (aliases and operation names
 * are the client's), so a metric's label values stay few whatever clients send.
 */
export function operationLabel(
  operation: OperationDefinitionNode,
  rootFields: Set<string>,
): string {
  const names = new Set<string>();
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return 'fragments';
    const name = selection.name.value;
    if (!rootFields.has(name) && !META_FIELDS.has(name)) return 'unknown';
    names.add(name);
  }
  if (names.size > MAX_NAMED_FIELDS) return 'multiple';
  return [...names].sort().join(',');
}

/** Labels each POST /query request with its operation once Apollo has resolved it. */
export class OperationLabelPlugin implements ApolloServerPlugin<{ req?: object }> {
  private readonly rootFields = new WeakMap<GraphQLSchema, Set<string>>();

  requestDidStart(): Promise<GraphQLRequestListener<{ req?: object }>> {
    return Promise.resolve({
      didResolveOperation: ({ operation, schema, contextValue }) => {
        if (operation && contextValue.req) {
          setOperation(contextValue.req, operationLabel(operation, this.rootFieldsOf(schema)));
        }
        return Promise.resolve();
      },
    });
  }

  private rootFieldsOf(schema: GraphQLSchema): Set<string> {
    let fields = this.rootFields.get(schema);
    if (!fields) {
      fields = new Set(Object.keys(schema.getQueryType()?.getFields() ?? {}));
      this.rootFields.set(schema, fields);
    }
    return fields;
  }
}
