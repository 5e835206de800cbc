import { randomUUID } from 'node:crypto';

/** The HTTP request a GraphQL context carries, whatever shape the host gave its context. */
export interface IncomingRequestLike {
  id?: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export function requestOfContext(context: unknown): IncomingRequestLike | undefined {
  if (!context || typeof context !== 'object') return undefined;
  const candidate = (context as { req?: unknown }).req ?? context;
  if (candidate && typeof candidate === 'object' && 'headers' in candidate) {
    return candidate as IncomingRequestLike;
  }
  return undefined;
}

const requestIds = new WeakMap<object, string>();

/** Fastify gives each request an id (we make it a UUID); other platforms get one here. */
export function requestIdOf(request: IncomingRequestLike | undefined): string {
  if (!request) return randomUUID();
  if (typeof request.id === 'string' && request.id.length > 0) return request.id;
  let id = requestIds.get(request);
  if (!id) {
    id = randomUUID();
    requestIds.set(request, id);
  }
  return id;
}
