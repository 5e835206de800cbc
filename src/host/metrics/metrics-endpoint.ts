import type { FastifyInstance } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode } from '../../common/errors/error-code';
import { sendError } from '../http/http-errors';
import type { ServiceMetrics } from './service-metrics';

export const METRICS_PATH = '/metrics';

export interface MetricsConfig {
  /** A listener of its own for GET /metrics, unauthenticated (keep it off the public network). */
  port?: number;
  host: string;
  /** GET /metrics on the service's own port, for `Authorization: Bearer <token>` only. */
  token?: string;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * GET /metrics on the service's port. An API access token never opens it: only the operator's
 * METRICS_TOKEN does, compared in constant time; anything else gets 401 in the error envelope.
 */
export function installMetricsRoute(
  fastify: FastifyInstance,
  metrics: ServiceMetrics,
  token: string,
): void {
  const expected = digest(`Bearer ${token}`);
  fastify.get(METRICS_PATH, async (request, reply) => {
    const presented = request.headers.authorization;
    if (typeof presented !== 'string' || !timingSafeEqual(digest(presented), expected)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      return sendError(
        reply,
        request,
        ErrorCode.INVALID_TOKEN,
        'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>; access tokens do not open it',
        401,
      );
    }
    const body = await metrics.registry.metrics();
    return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(body);
  });
}

/** A listener that serves GET /metrics and nothing else, on a port of its own. */
export async function startMetricsServer(
  metrics: ServiceMetrics,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== METRICS_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (body) => {
        response.writeHead(200, {
          'content-type': metrics.registry.contentType,
          'cache-control': 'no-store',
        });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}
