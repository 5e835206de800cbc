import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { bodyFailureStatus } from '../../ingest/fastify-ingest';
import { sendError } from './http-errors';

/** Per routed path: what it accepts, named in the answers to bodies it refuses. */
export type RouteLimits = Record<string, { maxBodyBytes: number; mediaTypes: string }>;

/**
 * What answers a body refused with `status` (413, 415 or 400): `limits` and Fastify's error code,
 * when known, make the message precise.
 */
export function describeBodyFailure(
  status: number,
  request: FastifyRequest,
  limits?: RouteLimits[string],
  fastifyCode?: string,
): { code: ErrorCode; message: string } {
  if (status === 413) {
    const max = limits?.maxBodyBytes ?? request.routeOptions.bodyLimit;
    return {
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: `Request body is too large: at most ${max} bytes`,
    };
  }
  if (status === 415) {
    return {
      code: ErrorCode.MALFORMED_REQUEST,
      message: limits
        ? `Content-Type must be ${limits.mediaTypes}`
        : 'Content-Type is not supported here',
    };
  }
  if (fastifyCode === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return {
      code: ErrorCode.MALFORMED_REQUEST,
      message: 'Request body size does not match Content-Length',
    };
  }
  // Broken or empty JSON, and JSON with a __proto__ or constructor.prototype key, which the
  // parser refuses alike.
  return { code: ErrorCode.MALFORMED_REQUEST, message: 'Request body is not valid JSON' };
}

/**
 * Gives every route an error handler that answers, in the error envelope, a body Fastify refused
 * before the route ran (too large, unsupported media type, malformed JSON); any other error goes
 * on to the app's handler (Nest's, then the host's filter). A route with a handler of its own
 * (POST /ingest, whose module answers its bodies) keeps it. Must run before routes are added.
 */
export function answerBodyFailures(fastify: FastifyInstance, routes: RouteLimits): void {
  fastify.addHook('onRoute', (route) => {
    if (route.errorHandler) return;
    const limits = Object.prototype.hasOwnProperty.call(routes, route.url)
      ? routes[route.url]
      : undefined;
    route.errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const status = bodyFailureStatus(error);
      // Thrown from a route's error handler, it goes to the app's.
      if (status === undefined) throw error;
      const { code, message } = describeBodyFailure(status, request, limits, error.code);
      sendError(reply, request, code, message);
    };
  });
}
