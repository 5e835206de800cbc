import type { FastifyRequest } from 'fastify';
import type { DashboardSession } from './accounts/sessions.service';

/** A request the DashboardSessionGuard has seen: its session, null when there is none. */
export interface DashboardRequest extends FastifyRequest {
  /** Undefined when the route did not ask for the session (a public route that never reads it). */
  dashboardSession?: DashboardSession | null;
}
