import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { SIGN_IN_CSRF_COOKIE, readCookie } from './cookies';
import { DashboardAuth } from './dashboard-auth.service';
import { CSRF_PROTECTED, CsrfRule } from './csrf-protected.decorator';
import { CsrfRejectedException } from './csrf-rejected.exception';
import type { DashboardRequest } from './dashboard-request';

/**
 * Checks the routes marked @CsrfProtected() (others pass); runs after the DashboardSessionGuard,
 * whose session holds the expected token.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: DashboardAuth,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const rule = this.reflector.get<Required<CsrfRule> | undefined>(
      CSRF_PROTECTED,
      context.getHandler(),
    );
    if (!rule) return true;
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const provided =
      rule.from === 'header'
        ? request.headers['x-csrf-token']
        : ((request.body ?? {}) as Record<string, unknown>)._csrf;
    let expected: string;
    if (rule.against === 'sign-in-cookie') {
      expected = readCookie(request, SIGN_IN_CSRF_COOKIE) ?? '';
    } else {
      const session = request.dashboardSession;
      if (session === undefined)
        throw new Error('@CsrfProtected() on a route that loads no session');
      // Signing out while signed out: there is no session to act for, so nothing to forge.
      if (session === null) return true;
      expected = session.csrfToken;
    }
    if (this.auth.csrfOk(request, expected, provided)) return true;
    throw new CsrfRejectedException(rule.against);
  }
}
