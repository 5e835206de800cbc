import type { GraphQLFormattedError } from 'graphql';
import { requestIdOf, requestOfContext } from './request-of';

/** Statuses an error may impose on the whole HTTP response (docs/api.md, Errors). */
const RESPONSE_STATUSES = new Set([400, 401, 403, 429, 503]);

/**
 * What the plugin reads and writes of Apollo Server's `willSendResponse` context; Apollo's own
 * context is one. Declared here rather than imported from `@apollo/server`: this package is
 * CommonJS, so its declarations would name Apollo's CommonJS types, which an ES-module host's
 * (nominal, through classes with private members such as HeaderMap) cannot be assigned to.
 */
export interface EnvelopeResponseContext {
  readonly contextValue: unknown;
  readonly response: {
    readonly http: { status?: number };
    readonly body:
      | {
          readonly kind: 'single';
          readonly singleResult: { errors?: ReadonlyArray<GraphQLFormattedError> };
        }
      | { readonly kind: 'incremental' };
  };
}

/** The request listener the plugin gives Apollo Server: one hook, structurally typed. */
export interface EnvelopeRequestListener {
  willSendResponse(requestContext: EnvelopeResponseContext): Promise<void>;
}

/**
 * Completes the error envelope once the response is known: adds the request id to every error
 * and gives the HTTP response the status an authentication, rate-limit or availability error
 * calls for. Pair it with `formatError: formatLoyaltyError`. An Apollo Server plugin
 * (`plugins: [new ErrorEnvelopePlugin()]`), typed structurally so that it is one for CommonJS and
 * ES-module hosts alike.
 */
export class ErrorEnvelopePlugin {
  requestDidStart(): Promise<EnvelopeRequestListener> {
    return Promise.resolve({
      willSendResponse({ response, contextValue }: EnvelopeResponseContext) {
        if (response.body.kind !== 'single') return Promise.resolve();
        const result = response.body.singleResult;
        const errors = result.errors;
        if (!errors || errors.length === 0) return Promise.resolve();
        const requestId = requestIdOf(requestOfContext(contextValue));
        result.errors = errors.map((error): GraphQLFormattedError => {
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
