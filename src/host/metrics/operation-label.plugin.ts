import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { GraphQLSchema, Kind, type OperationDefinitionNode } from 'graphql';
import { setOperation } from '../http/request-labels';

const META_FIELDS = new Set(['__schema', '__type', '__typename']);

/**
 * The label of an operation: its root field by name ("space"), "multiple" for two or more,
 * "introspection" for meta fields alone, "fragments" or "unknown". Names come from the schema,
 * never from the client (aliases and operation names are the client's), and one field at most, so
 * a metric's label values stay as few as the schema's root fields whatever clients send.
 */
export function operationLabel(
  operation: OperationDefinitionNode,
  rootFields: Set<string>,
): string {
  let label: string | undefined;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return 'fragments';
    const name = selection.name.value;
    if (META_FIELDS.has(name)) continue;
    if (!rootFields.has(name)) return 'unknown';
    if (label !== undefined && label !== name) return 'multiple';
    label = name;
  }
  return label ?? 'introspection';
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
