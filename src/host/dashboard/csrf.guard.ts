import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DashboardAuth } from './dashboard-auth.service';
import { CSRF_PROTECTED, CsrfRule } from './csrf-protected.decorator';
import { CsrfRejectedException } from './csrf-rejected.exception';
import type { DashboardRequest } from './dashboard-request';
import { provideSignInCsrf } from './sign-in-csrf';

/**
 * Checks the routes marked @CsrfProtected() (others pass); runs after the DashboardSessionGuard,
 * whose session holds the expected token. Every request it sees gets the sign-in form's signer,
 * for the sign-in page it may be answered with (its own, or a refusal's).
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
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const signInCsrf = this.auth.signInCsrf;
    if (signInCsrf) provideSignInCsrf(request, signInCsrf);
    if (!rule) return true;
    const provided =
      rule.from === 'header'
        ? request.headers['x-csrf-token']
        : ((request.body ?? {}) as Record<string, unknown>)._csrf;
    if (rule.against === 'sign-in-cookie') {
      if (this.auth.signInCsrfOk(request, provided)) return true;
      throw new CsrfRejectedException(rule.against);
    }
    const session = request.dashboardSession;
    if (session === undefined) throw new Error('@CsrfProtected() on a route that loads no session');
    // Signing out while signed out: there is no session to act for, so nothing to forge.
    if (session === null) return true;
    if (this.auth.csrfOk(request, session.csrfToken, provided)) return true;
    throw new CsrfRejectedException(rule.against);
  }
}
