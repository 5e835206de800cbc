import type { FastifyInstance } from 'fastify';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { envelopeFor } from '../common/errors/error-envelope';
import { AccessTokensService } from './access-tokens.service';

/**
 * Our host checks the token for the whole HTTP request before GraphQL sees it, so a request
 * without a valid token gets a real 401 and costs no parsing; it also covers a bare
 * `{ __typename }`, which runs no resolver and so meets no guard. (The guard stays on every
 * resolver for hosts that mount the module without this hook.)
 */
export function installQueryAuthHook(
  fastify: FastifyInstance,
  tokens: AccessTokensService,
  path: string,
): void {
  fastify.addHook('onRequest', async (request, reply) => {
    // The matched route, not the raw URL: "/%71uery" is routed to /query too.
    if (request.method === 'OPTIONS' || request.routeOptions.url !== path) return;
    try {
      await tokens.authenticateRequest(request);
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      const envelope = envelopeFor(error.code, error.message, request.id);
      await reply
        .code(error.extensions.http_status)
        .type('application/json')
        .send({ errors: [envelope] });
      return reply;
    }
  });
}
