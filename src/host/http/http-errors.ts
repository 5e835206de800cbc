import type { FastifyInstance } from 'fastify';
import { toErrorEnvelope } from '../../common/errors/error-envelope';

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
