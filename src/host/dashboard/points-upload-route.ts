import type { FastifyInstance } from 'fastify';
import { MAX_UPLOAD_BYTES } from './points-upload-parser';

/** The route of the uploads form (Fastify's spelling of Nest's path). */
export const UPLOAD_ROUTE = '/dashboard/spaces/:id/points/uploads';

/**
 * Its body: the file's text form-encoded, which takes up to 3 bytes a byte (%XX), and the other
 * fields. Above the service's body limit, which stays as it is for every other route.
 */
export const UPLOAD_BODY_LIMIT = 3 * MAX_UPLOAD_BYTES + 64 * 1024;

/**
 * Raises the body limit of POST UPLOAD_ROUTE, so that the service itself answers an upload over
 * MAX_UPLOAD_BYTES with the uploads page and its message. Fastify applies onRoute hooks as routes
 * are added, which Nest does in app.init(), after building the controllers: call it from one.
 */
export function raiseUploadBodyLimit(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url === UPLOAD_ROUTE && methods.includes('POST')) route.bodyLimit = UPLOAD_BODY_LIMIT;
  });
}
