import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookieHeader, readCookie } from './cookies';

/**
 * The one-line notices a page shows after its form (Post/Redirect/Get). The redirect carries a
 * notice code in a short-lived cookie, and the page it lands on takes it and clears it: a reload
 * shows the page without the notice, and nothing stays in the address bar. Codes, not text, so
 * that a cookie set by anyone else can only pick one of these messages.
 */
export const NOTICES = {
  'token.revoked': 'The token was revoked.',
  'space.private': 'The space is private now: only its own tokens and deployment tokens read it.',
  'space.public': 'The space is public now: every token with the query scope reads it.',
  'space.created': 'The space was created.',
  'space.updated': 'The space was saved.',
  'sprint.created': 'The sprint was created.',
  'sprint.updated': 'The sprint was saved.',
  'quest.created': 'The quest was created.',
  'quest.updated': 'The quest was saved.',
  'points.granted': 'The points were granted.',
  'points.deducted': 'The points were deducted.',
  'member.role': 'The role was changed.',
  'member.removed': 'The member was removed.',
  'member.left': 'You left the space.',
  'invitation.withdrawn': 'The invitation was withdrawn.',
  'account.disabled': 'The account was disabled and signed out everywhere.',
  'account.enabled': 'The account was enabled.',
  'account.removed': 'The account was removed.',
  'password.changed':
    'Your password was changed. Every other session of your account was signed out.',
  'invitation.accepted': 'Welcome: you joined the space.',
  'signed-out': 'You are signed out.',
  'session-ended':
    'Your session ended before the form was sent. Sign in again: what you typed is kept, send it once more.',
} as const;

export type NoticeCode = keyof typeof NOTICES;

export const NOTICE_COOKIE = 'lb_notice';
/** Long enough for the redirect to be followed, short enough to never meet a later page. */
const NOTICE_TTL_SECONDS = 60;

const noticeCookie = (request: FastifyRequest, value: string, maxAge: number): string =>
  cookieHeader(request, NOTICE_COOKIE, value, maxAge, { path: '/dashboard', sameSite: 'Lax' });

/** Adds the notice cookie to a reply (a 303 to the page that shows it). */
export function setNotice(request: FastifyRequest, reply: FastifyReply, code: NoticeCode): void {
  appendCookie(reply, noticeCookie(request, code, NOTICE_TTL_SECONDS));
}

/** The notice this request carries, if any, cleared on the reply so that it shows once. */
export function takeNotice(request: FastifyRequest, reply: FastifyReply): string | undefined {
  const code = readCookie(request, NOTICE_COOKIE);
  if (code === undefined) return undefined;
  appendCookie(reply, noticeCookie(request, '', 0));
  return Object.prototype.hasOwnProperty.call(NOTICES, code)
    ? NOTICES[code as NoticeCode]
    : undefined;
}

/** Set-Cookie may already hold the session's cookies: add to it, never replace it. */
export function appendCookie(reply: FastifyReply, cookie: string): void {
  const current = reply.getHeader('set-cookie');
  const list = current === undefined ? [] : Array.isArray(current) ? current : [String(current)];
  void reply.header('set-cookie', [...list, cookie]);
}
