import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

const INGEST_ROUTE = 'loyalty:ingest-route';
const reflector = new Reflector();

/**
 * Marks the handler of POST /ingest. Nest copies a handler's metadata onto the function it gives
 * the HTTP server, which is how the module finds its route there, whatever prefix the host adds.
 */
export const IngestRoute = (): MethodDecorator => SetMetadata(INGEST_ROUTE, true);

/** Whether a route handler on the host's HTTP server is the one of POST /ingest. */
export function isIngestHandler(handler: unknown): boolean {
  return (
    typeof handler === 'function' &&
    reflector.get<boolean | undefined>(INGEST_ROUTE, handler) === true
  );
}
