import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UnroutedAnswer } from '../http/http-errors.filter';
import type { DashboardAuth } from './dashboard-auth.service';
import { sendPage } from './page-answers';
import { FAVICON_SVG } from './assets';
import { ErrorCode } from '../../common/errors/error-code';
import { notFoundPage, unavailablePage } from './views/pages';

/**
 * Any /dashboard address no route takes: the HTML 404 page, with the navigation when signed in
 * (405 with Allow when the path takes other methods, as the API answers, but a page all the same).
 * A session that cannot be read (the database is down) shows the signed-out page. A page whose
 * route met a database outage or its deadline answers a 503 page to a browser.
 */
export function dashboardNotFound(auth: DashboardAuth): UnroutedAnswer {
  return {
    prefix: '/dashboard',
    async answer(request: FastifyRequest, reply: FastifyReply, allowed: string[]) {
      const session = await auth.sessionOf(request).catch(() => null);
      if (allowed.length > 0) void reply.header('allow', allowed.join(', '));
      return sendPage(
        reply,
        allowed.length > 0 ? 405 : 404,
        notFoundPage(session, 'There is no page at this address.'),
      );
    },
    failure(request: FastifyRequest, reply: FastifyReply, code: ErrorCode) {
      // A browser gets a page; a script of the settings endpoint keeps the envelope.
      if (!String(request.headers.accept ?? '').includes('text/html')) return undefined;
      void reply.header('retry-after', 1);
      return sendPage(reply, 503, unavailablePage(code === ErrorCode.REQUEST_TIMEOUT));
    },
  };
}

/**
 * GET /favicon.ico, which browsers ask for on their own: the dashboard's icon (an SVG, which they
 * take whatever the name says), so that no page logs a missing file.
 */
export function installFavicon(fastify: FastifyInstance): void {
  fastify.get('/favicon.ico', (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG),
  );
}
