import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DashboardAuth } from './dashboard-auth.service';
import type { DashboardRequest } from './dashboard-request';
import {
  PUBLIC_DASHBOARD_ROUTE,
  PublicDashboardRouteOptions,
} from './public-dashboard-route.decorator';
import { SignInRequiredException } from './sign-in-required.exception';

/**
 * Deny by default: every route of a controller using this guard needs a signed-in admin, whose
 * session it attaches to the request, unless the route is marked @PublicDashboardRoute().
 */
@Injectable()
export class DashboardSessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: DashboardAuth,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // Read from the route only: a public mark on a class would open routes nobody named.
    const publicRoute = this.reflector.get<PublicDashboardRouteOptions | undefined>(
      PUBLIC_DASHBOARD_ROUTE,
      context.getHandler(),
    );
    // Assets and the sign-in form never read the session: no query for them.
    if (publicRoute && publicRoute.session !== 'optional') return true;
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    request.dashboardSession = await this.auth.sessionOf(request);
    if (request.dashboardSession || publicRoute) return true;
    throw new SignInRequiredException();
  }
}
