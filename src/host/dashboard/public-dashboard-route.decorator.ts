import { SetMetadata } from '@nestjs/common';

export const PUBLIC_DASHBOARD_ROUTE = 'dashboard:public-route';

export interface PublicDashboardRouteOptions {
  /** Load the session when there is one (null when not) for @CurrentSession(), never refusing. */
  session?: 'optional';
}

/** Opts one route (never a whole class) out of the sign-in the DashboardSessionGuard requires. */
export const PublicDashboardRoute = (options: PublicDashboardRouteOptions = {}) =>
  SetMetadata(PUBLIC_DASHBOARD_ROUTE, options);
