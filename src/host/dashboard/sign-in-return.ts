import type { FastifyRequest } from 'fastify';

/** Where signing in leads when there is no page to go back to. */
export const HOME_PATH = '/dashboard/settings';
const SIGN_IN_PATH = '/dashboard/sign-in';
/** Pages nobody should be sent back to: the sign-in and sign-out forms, files, invitation secrets. */
const NEVER_BACK_TO = /^\/dashboard\/(sign-in|sign-out|session|assets\/|invitations\/)/;
const LOCAL = 'http://dashboard.invalid';
const hasControl = (value: string) =>
  [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * `value` as a page of this dashboard to return to after signing in: a path (and query) under
 * /dashboard/ on this origin, or undefined. Anything that could leave the site (`//host`, a
 * scheme, a backslash, a dot segment climbing out) is refused, so `next` is no open redirect.
 */
export function safeReturnPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000) return undefined;
  if (!value.startsWith('/dashboard/') || /[\\\s]/.test(value) || hasControl(value))
    return undefined;
  let url: URL;
  try {
    url = new URL(value, LOCAL);
  } catch {
    return undefined;
  }
  if (url.origin !== LOCAL || !url.pathname.startsWith('/dashboard/')) return undefined;
  if (NEVER_BACK_TO.test(url.pathname)) return undefined;
  return `${url.pathname}${url.search}`;
}

/**
 * The page a request without a session was made from: a page's own address for a GET, the page
 * the form was on (its Referer, from this host only) for a form.
 */
export function returnPathOf(request: FastifyRequest): string | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return safeReturnPath(request.url);
  const referer = request.headers.referer;
  if (typeof referer !== 'string') return undefined;
  try {
    const from = new URL(referer);
    if (from.host !== request.headers.host) return undefined;
    return safeReturnPath(`${from.pathname}${from.search}`);
  } catch {
    return undefined;
  }
}

/** The sign-in page's address, leading back to `next` (the home page needs no mention). */
export function signInPath(next: string | undefined): string {
  return next === undefined || next === HOME_PATH
    ? SIGN_IN_PATH
    : `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`;
}
