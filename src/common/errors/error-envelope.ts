import type { GraphQLFormattedError } from 'graphql';
import { ERROR_DEFINITIONS, ErrorCategory, ErrorCode, isErrorCode } from './error-code';

/** The `extensions` every error carries (docs/api.md, Errors). */
export interface ErrorEnvelopeExtensions {
  code: string;
  category: ErrorCategory;
  http_status: number;
  request_id?: string;
  timestamp: string;
}

/** Codes that graphql-js and Apollo give to a request the client got wrong. */
const GRAPHQL_CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/** graphql-js appends `Did you mean "x"?` to validation messages: it leaks the schema. */
export function stripSuggestions(message: string): string {
  return message.replace(/\s*Did you mean .*$/s, '');
}

export function envelopeFor(
  code: ErrorCode,
  message: string = ERROR_DEFINITIONS[code].message,
  requestId?: string,
  httpStatus: number = ERROR_DEFINITIONS[code].httpStatus,
): GraphQLFormattedError {
  const definition = ERROR_DEFINITIONS[code];
  const extensions: ErrorEnvelopeExtensions = {
    code,
    category: definition.category,
    http_status: httpStatus,
    ...(requestId ? { request_id: requestId } : {}),
    timestamp: new Date().toISOString(),
  };
  return { message, extensions: { ...extensions } };
}

/**
 * The HTTP status of a whole request refused with `code` outside GraphQL: its own, except that a
 * refusal GraphQL answers with 200 (an error beside data) is 404 or 400 by its category.
 */
export function routeStatusOf(code: ErrorCode): number {
  const { httpStatus, category } = ERROR_DEFINITIONS[code];
  if (httpStatus >= 400) return httpStatus;
  return category === 'NOT_FOUND' ? 404 : 400;
}

/**
 * The body of an HTTP answer refused whole, outside GraphQL (a route of the module, or a request a
 * host turns away before GraphQL): the same `{ errors: [...] }` shape as a GraphQL answer, with
 * the status of {@link routeStatusOf}.
 */
export function errorResponseBody(
  code: ErrorCode,
  message?: string,
  requestId?: string,
): { errors: GraphQLFormattedError[] } {
  return { errors: [envelopeFor(code, message, requestId, routeStatusOf(code))] };
}

/**
 * Maps whatever Apollo formatted into the envelope. Our own codes pass through with their
 * message; GraphQL's request errors keep their message minus suggestions; anything else is an
 * internal error whose message is never shown (it may hold SQL or a stack).
 */
export function toErrorEnvelope(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  const where = {
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
  };
  if (isErrorCode(code) && code !== ErrorCode.INTERNAL_SERVER_ERROR) {
    return { ...envelopeFor(code, formatted.message), ...where };
  }
  if (typeof code === 'string' && GRAPHQL_CLIENT_ERROR_CODES.has(code)) {
    const extensions: ErrorEnvelopeExtensions = {
      code,
      category: 'VALIDATION',
      http_status: 400,
      timestamp: new Date().toISOString(),
    };
    return {
      message: stripSuggestions(formatted.message),
      ...where,
      extensions: { ...extensions },
    };
  }
  return { ...envelopeFor(ErrorCode.INTERNAL_SERVER_ERROR), ...where };
}
