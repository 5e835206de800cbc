import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { DashboardRequest } from './dashboard-request';

/**
 * The signed-in admin's session, as the DashboardSessionGuard attached it: never null on a guarded
 * route, null on a public one with `session: 'optional'` when nobody is signed in.
 */
export const CurrentSession = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const session = context.switchToHttp().getRequest<DashboardRequest>().dashboardSession;
  // A public route that never loads the session: a wiring mistake, so fail loudly, not anonymous.
  if (session === undefined) throw new Error('@CurrentSession() on a route that loads no session');
  return session;
});
