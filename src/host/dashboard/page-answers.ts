import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { SIGN_IN_CSRF_COOKIE, cookieHeader } from './cookies';
import type { SafeHtml } from './views/html';
import { signInPage } from './views/pages';

/** Every dashboard page's headers: never cached, never framed, no inline code. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export function sendPage(reply: FastifyReply, status: number, page: SafeHtml): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(page.toString());
}

/** The sign-in form, with a fresh double-submit token: in its cookie and in the form alike. */
export function sendSignInPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  error?: string,
  email?: string,
): FastifyReply {
  const csrfToken = randomBytes(32).toString('base64url');
  void reply.header('set-cookie', cookieHeader(request, SIGN_IN_CSRF_COOKIE, csrfToken, 3600));
  return sendPage(reply, status, signInPage({ csrfToken, error, email }));
}
