import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'lb_session';
/** The sign-in form's CSRF nonce, before there is a session to hold a token (see SignInCsrf). */
export const SIGN_IN_CSRF_COOKIE = 'lb_signin_csrf';

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // a mangled cookie is no cookie
      }
    }
  }
  return undefined;
}

/**
 * An HttpOnly cookie, whole-site and SameSite=Strict unless `scope` says otherwise; Secure
 * whenever the request came over HTTPS (behind a TLS-terminating proxy, set TRUST_PROXY so that
 * X-Forwarded-Proto is believed).
 */
export function cookieHeader(
  request: FastifyRequest,
  name: string,
  value: string,
  maxAgeSeconds: number,
  scope: { path?: string; sameSite?: 'Strict' | 'Lax' } = {},
): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  const { path = '/', sameSite = 'Strict' } = scope;
  return `${name}=${encodeURIComponent(value)}; Path=${path}; HttpOnly; SameSite=${sameSite}; Max-Age=${maxAgeSeconds}${secure}`;
}
