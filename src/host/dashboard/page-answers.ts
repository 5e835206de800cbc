import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_CSRF_COOKIE, cookieHeader } from './cookies';
import { appendCookie } from './notices';
import { SIGN_IN_FORM_TTL_SECONDS, signInCsrfOf } from './sign-in-csrf';
import type { SafeHtml } from './views/html';
import { signInPage, SignInView } from './views/pages';

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

/**
 * A fresh CSRF pair for a form sent before there is a session (sign-in, accepting an invitation):
 * the nonce goes in the sign-in cookie, the returned value in the form's `_csrf`.
 */
export function issueSignInFormToken(request: FastifyRequest, reply: FastifyReply): string {
  const { cookie, field } = signInCsrfOf(request).mint();
  appendCookie(reply, cookieHeader(request, SIGN_IN_CSRF_COOKIE, cookie, SIGN_IN_FORM_TTL_SECONDS));
  return field;
}

/** The sign-in form, with a fresh CSRF pair. */
export function sendSignInPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  view: Omit<SignInView, 'csrfToken'> = {},
): FastifyReply {
  const csrfToken = issueSignInFormToken(request, reply);
  return sendPage(reply, status, signInPage({ ...view, csrfToken }));
}
