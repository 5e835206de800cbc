import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHooks } from './route-hooks';
import type { IngestLoad } from './ingest-load';

/**
 * Tells `load` how many ingest requests are in flight, from the moment their headers pass the gate
 * until their connection is done with them (answered, refused or cut off), and on which
 * connection, which may carry the client's next request until it closes (see IngestLoad).
 */
export function trackIngestRequests(
  fastify: FastifyInstance,
  path: string,
  load: Pick<IngestLoad, 'enterRequest' | 'clientGone'>,
): void {
  const watched = new WeakSet<object>();
  addRouteHooks(
    fastify,
    'trackIngestRequests',
    { path },
    {
      onRequest: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        const connection = request.raw.socket;
        if (!watched.has(connection)) {
          watched.add(connection);
          connection.once('close', () => load.clientGone(connection));
        }
        const enteredLeave = load.enterRequest(connection);
        // The connection may have closed before the answer did (its own 'close' came first).
        const leave = () => {
          enteredLeave();
          if (connection.destroyed) load.clientGone(connection);
        };
        // A client that went away while the gate awaited: 'close' was emitted already.
        if (reply.raw.closed || reply.raw.destroyed) leave();
        else reply.raw.once('close', leave);
        done();
      },
    },
  );
}
