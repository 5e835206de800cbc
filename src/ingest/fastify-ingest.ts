import type { FastifyError, FastifyInstance } from 'fastify';
import { ERROR_DEFINITIONS } from '../common/errors/error-code';
import { errorResponseBody } from '../common/errors/error-envelope';
import { describeBodyFailure, NDJSON_MEDIA_TYPES } from './ingest-body';
import { isIngestHandler } from './ingest-route';

/** Marks POST /ingest in its Fastify route config, where the NDJSON parser can see it. */
const INGEST_ROUTE_CONFIG = 'loyaltyIngest';

/** The status of a body Fastify's content-type parsing refused (4xx), if that is what failed. */
export function bodyFailureStatus(error: FastifyError): number | undefined {
  const status = error.statusCode;
  const fromParsing = String(error.code).startsWith('FST_ERR_CTP_') || error instanceof SyntaxError;
  return fromParsing && typeof status === 'number' && status >= 400 && status < 500
    ? status
    : undefined;
}

/**
 * Gives the POST /ingest route an error handler for what fails before Nest runs it (a media type
 * without a parser, malformed JSON, a body over the limit), answering in the error envelope; any
 * other error goes on to the route's or the host's handler. Fastify applies onRoute hooks as a
 * route is added, so this must run before Nest adds its routes.
 */
export function answerBodyFailuresOnFastify(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    if (!isIngestHandler(route.handler)) return;
    route.config = { ...route.config, [INGEST_ROUTE_CONFIG]: true };
    const previous = route.errorHandler;
    route.errorHandler = function (this: FastifyInstance, error, request, reply) {
      const status = bodyFailureStatus(error);
      if (status === undefined) {
        if (previous) return previous.call(this, error, request, reply);
        // Thrown from an error handler, it goes to the next one: the host's.
        throw error;
      }
      const { code, message } = describeBodyFailure(status, request.routeOptions.bodyLimit);
      void reply
        .code(ERROR_DEFINITIONS[code].httpStatus)
        .type('application/json')
        .send(errorResponseBody(code, message, request.id));
    };
  });
}

/**
 * Lets NDJSON through to POST /ingest as the request's unread stream (the controller reads it
 * within the route's body limit), unless the host has a parser of its own for the type. Fastify
 * parsers are app-wide, so the host's other routes are refused the type with 415, as Fastify
 * does for a type it has no parser for.
 */
export function acceptNdjsonOnFastify(fastify: FastifyInstance): void {
  for (const type of NDJSON_MEDIA_TYPES) {
    if (fastify.hasContentTypeParser(type)) continue;
    fastify.addContentTypeParser(type, (request, payload, done) => {
      const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
      if (config?.[INGEST_ROUTE_CONFIG] === true) return done(null, payload);
      const refused = Object.assign(new Error(`Unsupported Media Type: ${type}`), {
        statusCode: 415,
        code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      });
      done(refused, undefined);
    });
  }
}
