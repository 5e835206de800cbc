import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardSession } from './accounts/sessions.service';
import { setNotice } from './notices';
import { sendPage } from './page-answers';
import { MAX_UPLOAD_BYTES } from './forms/points-upload-parser';
import { returnPathOf, signInPath } from './sign-in-return';
import type { SafeHtml } from './views/html';

/** The route of the uploads form (Fastify's spelling of Nest's path). */
export const UPLOAD_ROUTE = '/dashboard/spaces/:id/points/uploads';

/**
 * Its body: the file's text form-encoded, which takes up to 3 bytes a byte (%XX), and the other
 * fields. The form works without the page's script too (pasted lines), so the text comes as a
 * form field either way. Above the service's body limit, which stays as it is for every other
 * route; read only for a signed-in session (see installUploadRoute).
 */
export const UPLOAD_BODY_LIMIT = 3 * MAX_UPLOAD_BYTES + 64 * 1024;

/** Upload bodies an instance reads at once: each holds up to UPLOAD_BODY_LIMIT, then its parse. */
export const MAX_UPLOADS_IN_FLIGHT = 4;

/** Why an upload's body is not read now: the session sends one already, or the instance is full. */
export type UploadBusy = 'session' | 'instance';

/**
 * The uploads being sent to this instance: at most MAX_UPLOADS_IN_FLIGHT, one a session, so that
 * a few signed-in tabs cannot make it hold more than a bounded number of large bodies at once.
 */
export class UploadsInFlight {
  private readonly sessions = new Set<string>();

  constructor(private readonly max = MAX_UPLOADS_IN_FLIGHT) {}

  /** Takes a place for the session's upload (answers null), or answers why there is none. */
  take(sessionHash: string): UploadBusy | null {
    if (this.sessions.has(sessionHash)) return 'session';
    if (this.sessions.size >= this.max) return 'instance';
    this.sessions.add(sessionHash);
    return null;
  }

  release(sessionHash: string): void {
    this.sessions.delete(sessionHash);
  }
}

/** What the route's hook needs of the dashboard: who is signed in, and the page of a busy answer. */
export interface UploadRouteServices {
  sessionOf(request: FastifyRequest): Promise<DashboardSession | null>;
  /** `uploadsPath`: the uploads page the form was sent to. */
  busyPage(session: DashboardSession, uploadsPath: string, busy: UploadBusy): SafeHtml;
}

/** How long a browser is told to wait before sending an upload again to a full instance. */
const RETRY_AFTER_SECONDS = 10;
/**
 * An upload whose body has sent nothing for this long is cut off, freeing its place: a dropped
 * network or a trickling client must not hold one of the instance's few places for hours.
 */
export const UPLOAD_IDLE_MS = 60_000;

/**
 * Raises the body limit of POST UPLOAD_ROUTE, so that the service itself answers an upload over
 * MAX_UPLOAD_BYTES with the uploads page and its message, and checks the session before the body
 * is read: Nest's guard runs only after Fastify has read and parsed it. Without a session the
 * answer is the guard's (a 303 to the sign-in page), on a connection then closed, so the body is
 * never read. Fastify applies onRoute hooks as routes are added, which Nest does in app.init(),
 * after building the controllers: call it from one.
 */
export function installUploadRoute(
  fastify: FastifyInstance,
  services: UploadRouteServices,
  inFlight = new UploadsInFlight(),
  idleMs = UPLOAD_IDLE_MS,
): void {
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url !== UPLOAD_ROUTE || !methods.includes('POST')) return;
    route.bodyLimit = UPLOAD_BODY_LIMIT;
    route.onRequest = [...(route.onRequest === undefined ? [] : [route.onRequest].flat()), gate];
  });

  async function gate(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    let session: DashboardSession | null;
    try {
      session = await services.sessionOf(request);
    } catch (error) {
      // The database is out of reach: the body is not read, and the browser may try again.
      void reply.header('connection', 'close').header('retry-after', RETRY_AFTER_SECONDS);
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(`The upload could not be taken (${(error as Error).message}). Try again shortly.`);
    }
    if (session === null) {
      // As DashboardPageFilter answers the guard's SignInRequiredException to a form.
      void reply.header('connection', 'close');
      setNotice(request, reply, 'session-ended');
      return reply.redirect(signInPath(returnPathOf(request)), 303);
    }
    const busy = inFlight.take(session.sessionHash);
    if (busy !== null) {
      void reply.header('connection', 'close');
      if (busy === 'instance') void reply.header('retry-after', RETRY_AFTER_SECONDS);
      const page = services.busyPage(session, request.url.split('?')[0], busy);
      return sendPage(reply, busy === 'session' ? 429 : 503, page);
    }
    // 'close' comes once the answer is sent or the connection is gone, whatever became of it.
    reply.raw.once('close', () => inFlight.release(session.sessionHash));
    // Until the body is read, no byte for idleMs cuts the connection (and so frees the place).
    // The service sets no socket timeout of its own (Fastify's connectionTimeout is 0), so the
    // socket is left without one again once the body has arrived.
    const socket = request.raw.socket as { setTimeout?: unknown } | undefined;
    if (socket && typeof socket.setTimeout === 'function') {
      const connection = request.raw.socket;
      connection.setTimeout(idleMs, () => connection.destroy());
      request.raw.once('end', () => connection.setTimeout(0));
    }
  }
}
