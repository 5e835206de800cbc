import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { DashboardSession } from './accounts/sessions.service';
import { setNotice } from './notices';
import { PAGE_HEADERS, sendPage } from './page-answers';
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
/** Of those, the uploads one space may have at once: one space's team cannot take them all. */
export const MAX_UPLOADS_PER_SPACE = 2;

/**
 * Why an upload's body is not read now: the account sends one already, the space has its share,
 * or the instance is full.
 */
export type UploadBusy = 'account' | 'space' | 'instance';

/**
 * The uploads being sent to this instance: one an account (whatever its sessions), at most
 * MAX_UPLOADS_PER_SPACE a space and MAX_UPLOADS_IN_FLIGHT in all, so that a few signed-in tabs or
 * accounts cannot make it hold more than a bounded number of large bodies at once.
 */
export class UploadsInFlight {
  private readonly accounts = new Map<string, number>();

  constructor(
    private readonly max = MAX_UPLOADS_IN_FLIGHT,
    private readonly perSpace = MAX_UPLOADS_PER_SPACE,
  ) {}

  /** Takes a place for the account's upload to the space (answers null), or answers why not. */
  take(accountId: string, spaceId: number): UploadBusy | null {
    if (this.accounts.has(accountId)) return 'account';
    if (this.accounts.size >= this.max) return 'instance';
    let inSpace = 0;
    for (const space of this.accounts.values()) if (space === spaceId) inSpace++;
    if (inSpace >= this.perSpace) return 'space';
    this.accounts.set(accountId, spaceId);
    return null;
  }

  release(accountId: string): void {
    this.accounts.delete(accountId);
  }
}

/** What the route's hook needs of the dashboard: who is signed in, and the pages it answers. */
export interface UploadRouteServices {
  sessionOf(request: FastifyRequest): Promise<DashboardSession | null>;
  /** `uploadsPath`: the uploads page the form was sent to. */
  busyPage(session: DashboardSession, uploadsPath: string, busy: UploadBusy): SafeHtml;
  /**
   * Why the account may not upload to space `id` (the route's parameter), as the uploads page
   * answers it: its 403 or 404 page; null when it may.
   */
  uploadRefusal(
    session: DashboardSession,
    id: string,
  ): Promise<{ status: number; page: SafeHtml } | null>;
}

/** How long a browser is told to wait before sending an upload again to a full instance. */
const RETRY_AFTER_SECONDS = 10;
/**
 * An upload whose body brings fewer than UPLOAD_MIN_BYTES in any UPLOAD_RATE_WINDOW_MS, or is not
 * whole after UPLOAD_BODY_DEADLINE_MS, is cut off, freeing its place: a dropped network or a
 * client trickling bytes must not hold one of the instance's few places for long. 64 KiB in 10 s
 * is far below any real connection; the deadline brings the largest body (UPLOAD_BODY_LIMIT,
 * about 30 MB) over a link of 1 Mbit/s.
 */
export const UPLOAD_RATE_WINDOW_MS = 10_000;
export const UPLOAD_MIN_BYTES = 64 * 1024;
export const UPLOAD_BODY_DEADLINE_MS = 5 * 60_000;

/** The answer while sessions cannot be read: a page of its own, naming no server. */
const OUTAGE_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Upload not taken</title></head>' +
  '<body><main><h1>Upload not taken</h1><p role="alert">The service cannot reach its database ' +
  'right now, so the upload was not read. Send it again in a few seconds.</p>' +
  '<p><a href="/dashboard">Back to the dashboard</a></p></main></body></html>';

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
  rate: { windowMs: number; minBytes: number; deadlineMs: number } = {
    windowMs: UPLOAD_RATE_WINDOW_MS,
    minBytes: UPLOAD_MIN_BYTES,
    deadlineMs: UPLOAD_BODY_DEADLINE_MS,
  },
): void {
  const logger = new Logger('PointsUploads');
  const refuse = (request: FastifyRequest, why: string) =>
    logger.warn(`Upload to ${request.url.split('?')[0]} refused before its body: ${why}`);
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
      // The database is out of reach: the body is not read, and the browser may try again. The
      // driver's message (which may name the database's host) goes to the log, not the page.
      refuse(request, `sessions cannot be read (${(error as Error).message}) from ${request.ip}`);
      void reply.header('connection', 'close').header('retry-after', RETRY_AFTER_SECONDS);
      return reply.code(503).headers(PAGE_HEADERS).send(OUTAGE_PAGE);
    }
    if (session === null) {
      // As DashboardPageFilter answers the guard's SignInRequiredException to a form.
      void reply.header('connection', 'close');
      setNotice(request, reply, 'session-ended');
      return reply.redirect(signInPath(returnPathOf(request)), 303);
    }
    const { id = '' } = request.params as { id?: string };
    let refused: { status: number; page: SafeHtml } | null;
    try {
      refused = await services.uploadRefusal(session, id);
    } catch (error) {
      refuse(request, `the space cannot be read (${(error as Error).message}) from ${request.ip}`);
      void reply.header('connection', 'close').header('retry-after', RETRY_AFTER_SECONDS);
      return reply.code(503).headers(PAGE_HEADERS).send(OUTAGE_PAGE);
    }
    if (refused) {
      // Only who may upload to the space takes a place: others get the page's own refusal.
      refuse(request, `${session.email} may not upload to space ${id} (${refused.status})`);
      void reply.header('connection', 'close');
      return sendPage(reply, refused.status, refused.page);
    }
    const spaceId = Number(id);
    const busy = inFlight.take(session.adminId, spaceId);
    if (busy !== null) {
      refuse(request, `${session.email}: no place (${busy} busy)`);
      void reply.header('connection', 'close');
      if (busy !== 'account') void reply.header('retry-after', RETRY_AFTER_SECONDS);
      const page = services.busyPage(session, request.url.split('?')[0], busy);
      return sendPage(reply, busy === 'account' ? 429 : 503, page);
    }
    const account = session.adminId;
    const email = session.email;
    // 'close' comes once the answer is sent or the connection is gone, whatever became of it.
    reply.raw.once('close', () => inFlight.release(account));
    cutOffSlowBody(request, email);
  }

  /**
   * Until the body has arrived, a window that brings fewer than rate.minBytes, or the deadline,
   * ends the connection (and so frees the place). Bytes are counted on the socket, never by
   * reading the body here.
   */
  function cutOffSlowBody(request: FastifyRequest, email: string): void {
    const socket = request.raw.socket as Socket | undefined;
    if (!socket || typeof socket.bytesRead !== 'number') return;
    const path = request.url.split('?')[0];
    const cut = (why: string) => {
      stop();
      logger.warn(`Upload to ${path} cut off: ${email} ${why}`);
      socket.destroy();
    };
    let seen = socket.bytesRead;
    const timer = setInterval(() => {
      const now = socket.bytesRead;
      if (now - seen >= rate.minBytes) seen = now;
      else cut(`sent ${now - seen} bytes in ${rate.windowMs} ms`);
    }, rate.windowMs);
    const deadline = setTimeout(
      () => cut(`had not sent the whole body after ${rate.deadlineMs} ms`),
      rate.deadlineMs,
    );
    timer.unref();
    deadline.unref();
    function stop() {
      clearInterval(timer);
      clearTimeout(deadline);
    }
    request.raw.once('end', stop);
    request.raw.once('close', stop);
  }
}
