import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHooks } from '../http/route-hooks';
import type { TransactionRunner } from '../storage/transaction-runner';

/**
 * Tells the TransactionRunner how many ingest requests are in flight, from the moment their
 * headers pass the gate until their connection is done with them (answered, refused or cut off):
 * while they come several at a time, SQLite's group commit waits a moment for the requests that
 * will follow (see TransactionRunner.enterRequest).
 */
export function trackIngestRequests(
  fastify: FastifyInstance,
  path: string,
  runner: Pick<TransactionRunner, 'enterRequest'>,
): void {
  addRouteHooks(
    fastify,
    'trackIngestRequests',
    { path },
    {
      onRequest: (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        const leave = runner.enterRequest();
        // A client that went away while the gate awaited: 'close' was emitted already.
        if (reply.raw.closed || reply.raw.destroyed) leave();
        else reply.raw.once('close', leave);
        done();
      },
    },
  );
}
