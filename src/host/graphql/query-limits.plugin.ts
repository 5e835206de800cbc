import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import {
  GraphQLError,
  OperationTypeNode,
  type DocumentNode,
  type OperationDefinitionNode,
} from 'graphql';
import { ERROR_DEFINITIONS, ErrorCode } from '../../common/errors/error-code';
import { introspectionWeights } from './introspection-weights';
import { AnalysisReads, analyzeOperation, QueryShape } from './query-analysis';

export interface QueryLimitOptions {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

/**
 * Introspection answers per operation, whatever the cost limit: one schema is all a client needs,
 * and copies of it under aliases are the cheapest way to make a large answer.
 */
export const MAX_INTROSPECTION_ANSWERS = { __schema: 1, __type: 10 } as const;

function refusal(code: ErrorCode, detail: string): GraphQLError {
  const definition = ERROR_DEFINITIONS[code];
  return new GraphQLError(`${definition.message}: ${detail}`, {
    extensions: {
      code,
      category: definition.category,
      http_status: definition.httpStatus,
      http: { status: definition.httpStatus },
    },
  });
}

/**
 * Refuses, with HTTP 400 and before any resolver or database work, an operation that is not a
 * query, or is too deep, has too many aliases, asks for more introspection answers than
 * MAX_INTROSPECTION_ANSWERS or would cost too much (page sizes counted, variables resolved,
 * introspection weighed by the schema it describes).
 */
export class QueryLimitsPlugin implements ApolloServerPlugin<object> {
  /**
   * Shapes that do not depend on the variables, by parsed document and operation: Apollo keeps one
   * parsed document per query text, so a client's repeated query is measured once (the limits
   * are still checked on every request).
   */
  private readonly shapes = new WeakMap<
    DocumentNode,
    WeakMap<OperationDefinitionNode, QueryShape>
  >();

  constructor(private readonly limits: QueryLimitOptions) {}

  requestDidStart(): Promise<GraphQLRequestListener<object>> {
    const limits = this.limits;
    const shapes = this.shapes;
    return Promise.resolve({
      didResolveOperation({ document, operation, request, schema }) {
        if (!operation) return Promise.resolve();
        if (operation.operation !== OperationTypeNode.QUERY) {
          throw refusal(
            ErrorCode.OPERATION_NOT_SUPPORTED,
            `the service answers queries only, not a ${operation.operation}`,
          );
        }
        let byOperation = shapes.get(document);
        let shape = byOperation?.get(operation);
        if (!shape) {
          const reads: AnalysisReads = { variables: false };
          shape = analyzeOperation(
            document,
            operation,
            request.variables ?? {},
            introspectionWeights(schema),
            reads,
          );
          if (!reads.variables) {
            if (!byOperation) shapes.set(document, (byOperation = new WeakMap()));
            byOperation.set(operation, shape);
          }
        }
        if (shape.depth > limits.maxDepth) {
          throw refusal(
            ErrorCode.QUERY_TOO_DEEP,
            `depth ${shape.depth}, at most ${limits.maxDepth}`,
          );
        }
        if (shape.aliases > limits.maxAliases) {
          throw refusal(
            ErrorCode.TOO_MANY_ALIASES,
            `${shape.aliases} aliases, at most ${limits.maxAliases}`,
          );
        }
        for (const [field, count] of [
          ['__schema', shape.introspection.schema],
          ['__type', shape.introspection.type],
        ] as const) {
          if (count > MAX_INTROSPECTION_ANSWERS[field]) {
            throw refusal(
              ErrorCode.QUERY_TOO_COSTLY,
              `${count} ${field} selections, at most ${MAX_INTROSPECTION_ANSWERS[field]}`,
            );
          }
        }
        if (shape.cost > limits.maxCost) {
          throw refusal(
            ErrorCode.QUERY_TOO_COSTLY,
            `cost ${shape.cost}, at most ${limits.maxCost}`,
          );
        }
        return Promise.resolve();
      },
    });
  }
}
