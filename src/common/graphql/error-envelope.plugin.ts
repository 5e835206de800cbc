import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import { requestIdOf, requestOfContext } from './request-of';

/** Statuses an error may impose on the whole HTTP response (docs/api.md, Errors). */
const RESPONSE_STATUSES = new Set([400, 401, 403, 429, 503]);

/**
 * Completes the error envelope once the response is known: adds the request id to every error
 * and gives the HTTP response the status an authentication, rate-limit or availability error
 * calls for. Pair it with `formatError: formatLoyaltyError`.
 */
export class ErrorEnvelopePlugin implements ApolloServerPlugin<object> {
  requestDidStart(): Promise<GraphQLRequestListener<object>> {
    return Promise.resolve({
      willSendResponse({ response, contextValue }) {
        if (response.body.kind !== 'single') return Promise.resolve();
        const errors = response.body.singleResult.errors;
        if (!errors || errors.length === 0) return Promise.resolve();
        const requestId = requestIdOf(requestOfContext(contextValue));
        response.body.singleResult.errors = errors.map((error): GraphQLFormattedError => {
          const { timestamp, ...rest } = error.extensions ?? {};
          return { ...error, extensions: { ...rest, request_id: requestId, timestamp } };
        });
        for (const error of errors) {
          const status = error.extensions?.http_status;
          if (typeof status === 'number' && RESPONSE_STATUSES.has(status)) {
            response.http.status = status;
            break;
          }
        }
        return Promise.resolve();
      },
    });
  }
}
