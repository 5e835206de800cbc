import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { envelopeFor, routeStatusOf, toErrorEnvelope } from '../../common/errors/error-envelope';
import type { RouteTable } from './route-table';

/** Answers a request outside GraphQL with one error in the envelope; `http_status` is `status`. */
export function sendError(
  reply: FastifyReply,
  request: FastifyRequest,
  code: ErrorCode,
  message?: string,
  status: number = routeStatusOf(code),
): FastifyReply {
  const envelope = envelopeFor(code, message, request.id);
  return reply
    .code(status)
    .type('application/json')
    .send({
      errors: [{ ...envelope, extensions: { ...envelope.extensions, http_status: status } }],
    });
}

/**
 * Answers a request no route took: 405 METHOD_NOT_ALLOWED with `Allow` when the path has routes
 * for other methods, else 404 NOT_FOUND.
 */
export function refuseUnrouted(
  reply: FastifyReply,
  request: FastifyRequest,
  routes: RouteTable,
): FastifyReply {
  const path = request.url.split('?')[0];
  const allowed = routes.methodsAt(path);
  if (allowed.length > 0) {
    void reply.header('allow', allowed.join(', '));
    return sendError(
      reply,
      request,
      ErrorCode.METHOD_NOT_ALLOWED,
      `Method ${request.method} is not allowed here: use ${allowed.join(', ')}`,
    );
  }
  const shown = path.length > 100 ? `${path.slice(0, 100)}...` : path;
  return sendError(
    reply,
    request,
    ErrorCode.NOT_FOUND,
    `No route answers ${request.method} ${shown}`,
  );
}

/**
 * An error that leaves Apollo before our plugin saw it (CSRF prevention, an empty query) still
 * gets the whole envelope and the request id.
 */
export function installErrorEnvelopes(fastify: FastifyInstance, queryPath: string): void {
  fastify.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || request.routeOptions.url !== queryPath) return payload;
    const text =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : null;
    if (text === null || text.includes('"request_id"')) return payload;
    try {
      const body = JSON.parse(text) as { errors?: unknown };
      if (!Array.isArray(body.errors)) return payload;
      body.errors = body.errors.map((error: Parameters<typeof toErrorEnvelope>[0]) => {
        const envelope = error.extensions?.category ? error : toErrorEnvelope(error);
        return { ...envelope, extensions: { ...envelope.extensions, request_id: request.id } };
      });
      void reply.type('application/json');
      return JSON.stringify(body);
    } catch {
      return payload;
    }
  });
}
