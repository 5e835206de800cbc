import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { SESSION_COOKIE, readCookie } from './cookies';
import { DashboardSession, SessionsService } from './sessions.service';

/** Who is signed in, and whether a state-changing request really comes from our own pages. */
@Injectable()
export class DashboardAuth {
  constructor(private readonly sessions: SessionsService) {}

  sessionOf(request: FastifyRequest): Promise<DashboardSession | null> {
    return this.sessions.find(readCookie(request, SESSION_COOKIE));
  }

  /**
   * The synchronizer token must match the session's, and a browser's Origin (sent on every POST
   * and DELETE) must be this site. Scripts send the token in `x-csrf-token`.
   */
  csrfOk(request: FastifyRequest, expected: string, provided: unknown): boolean {
    return sameOrigin(request) && tokensMatch(expected, provided);
  }
}

/** Constant-time comparison; an empty or missing token never matches, whatever it is compared with. */
function tokensMatch(expected: string, provided: unknown): boolean {
  if (typeof provided !== 'string' || provided === '' || expected === '') return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(provided), digest(expected));
}

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
