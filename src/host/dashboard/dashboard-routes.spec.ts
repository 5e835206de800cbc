import { RequestMethod, Type } from '@nestjs/common';
import {
  GUARDS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  REDIRECT_METADATA,
} from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { CSRF_PROTECTED, CsrfRule } from './csrf-protected.decorator';
import { CsrfRejectedException } from './csrf-rejected.exception';
import { CsrfGuard } from './csrf.guard';
import type { DashboardRequest } from './dashboard-request';
import { DashboardSessionGuard } from './dashboard-session.guard';
import {
  PUBLIC_DASHBOARD_ROUTE,
  PublicDashboardRouteOptions,
} from './public-dashboard-route.decorator';
import { SignInRequiredException } from './sign-in-required.exception';
import { DashboardAuth } from './dashboard-auth.service';
import { DashboardController } from './dashboard.controller';
import { DashboardModule } from './dashboard.module';
import type { DashboardSession, SessionsService } from './accounts/sessions.service';
import { Access } from './accounts/roles';

interface Route {
  route: string;
  controller: Type;
  /** Answered with @Redirect(): Post/Redirect/Get. */
  redirects: boolean;
  guards: unknown[];
  publicRoute?: PublicDashboardRouteOptions;
  csrf?: Required<CsrfRule>;
}

/** Every route of every controller the dashboard module registers, with what guards it. */
function dashboardRoutes(): Route[] {
  const stub = { module: class {} };
  const controllers = DashboardModule.forRoot(stub, stub).controllers ?? [];
  return controllers.flatMap((controller: Type) => {
    const prefix = Reflect.getMetadata(PATH_METADATA, controller) as string;
    const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) ?? []) as unknown[];
    const prototype = controller.prototype as Record<string, object>;
    return Object.getOwnPropertyNames(prototype)
      .filter((name) => name !== 'constructor')
      .map((name) => prototype[name])
      .filter((handler) => Reflect.hasMetadata(PATH_METADATA, handler))
      .map((handler) => {
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string;
        const methodGuards = (Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as unknown[];
        return {
          route: `${method} /${[prefix, path].filter((p) => p && p !== '/').join('/')}`,
          controller,
          redirects: Reflect.hasMetadata(REDIRECT_METADATA, handler),
          guards: [...classGuards, ...methodGuards],
          publicRoute: Reflect.getMetadata(PUBLIC_DASHBOARD_ROUTE, handler) as
            PublicDashboardRouteOptions | undefined,
          csrf: Reflect.getMetadata(CSRF_PROTECTED, handler) as Required<CsrfRule> | undefined,
        };
      });
  });
}

describe('dashboard routes', () => {
  const routes = dashboardRoutes();

  it('finds the routes of every controller', () => {
    expect(routes.map((r) => r.route)).toEqual(
      expect.arrayContaining([
        'GET /dashboard/settings',
        'GET /dashboard/settings/server-api/tokens/:id/rotate',
        'POST /dashboard/settings/server-api/tokens/:id/rotate',
        'POST /dashboard/spaces/:id/privacy',
        'POST /dashboard/spaces/:id/points',
        'GET /dashboard/spaces/:id/members',
        'POST /dashboard/spaces/:id/invitations',
        'POST /dashboard/spaces/:id/invitations/:invitationId/withdraw',
        'POST /dashboard/spaces/:id/members/:accountId/role',
        'POST /dashboard/spaces/:id/members/:accountId/remove',
        'GET /dashboard/invitations/:secret',
        'POST /dashboard/invitations/:secret',
        'GET /dashboard/account',
        'POST /dashboard/account/password',
        'GET /dashboard/accounts',
        'POST /dashboard/accounts/:id/disable',
        'POST /dashboard/accounts/:id/enable',
        'GET /dashboard/accounts/:id/remove',
        'POST /dashboard/accounts/:id/remove',
        'GET /dashboard/audit',
        'GET /settings/server-api/tokens',
        'DELETE /settings/server-api/tokens/:id',
      ]),
    );
    expect(routes.length).toBeGreaterThanOrEqual(45);
  });

  it('puts every route behind the session guard, then the CSRF guard', () => {
    for (const { route, guards } of routes) {
      expect({ route, guards: guards.slice(0, 2) }).toEqual({
        route,
        guards: [DashboardSessionGuard, CsrfGuard],
      });
    }
  });

  it('lets exactly these routes through without a session', () => {
    const open = routes
      .filter((r) => r.publicRoute)
      .map(
        (r) => `${r.route}${r.publicRoute?.session ? ` (session ${r.publicRoute.session})` : ''}`,
      );
    expect(open.sort()).toEqual([
      'GET /dashboard/assets/:file',
      'GET /dashboard/invitations/:secret (session optional)',
      'GET /dashboard/session (session optional)',
      'GET /dashboard/sign-in (session optional)',
      'POST /dashboard/invitations/:secret',
      'POST /dashboard/sign-in',
      'POST /dashboard/sign-out (session optional)',
    ]);
  });

  it('answers every form of every dashboard page with a redirect (Post/Redirect/Get)', () => {
    const forms = routes.filter((r) => r.route.startsWith('POST /dashboard/'));
    // Tokens and teams, spaces, sprints and quests, points and uploads.
    expect(forms.length).toBeGreaterThanOrEqual(23);
    // These two answer with @Res(): a 303 with the new session, or the form again when refused.
    expect(
      forms
        .filter((r) => !r.redirects)
        .map((r) => r.route)
        .sort(),
    ).toEqual(['POST /dashboard/invitations/:secret', 'POST /dashboard/sign-in']);
  });

  it('checks a CSRF token on every state change, against a session only where one is loaded', () => {
    const changes = routes.filter((r) => !/^(GET|HEAD|OPTIONS) /.test(r.route));
    expect(changes.length).toBeGreaterThan(0);
    for (const { route, csrf, publicRoute } of routes) {
      const changesState = changes.some((c) => c.route === route);
      expect({ route, csrf: csrf !== undefined }).toEqual({ route, csrf: changesState });
      if (csrf?.against === 'session' && publicRoute)
        expect({ route, session: publicRoute.session }).toEqual({ route, session: 'optional' });
    }
    // Forms sent before there is a session: sign-in, and accepting an invitation.
    expect(
      routes
        .filter((r) => r.csrf?.against === 'sign-in-cookie')
        .map((r) => r.route)
        .sort(),
    ).toEqual(['POST /dashboard/invitations/:secret', 'POST /dashboard/sign-in']);
  });
});

describe('the dashboard guards', () => {
  const session: DashboardSession = {
    adminId: 'a',
    email: 'admin@example.com',
    name: null,
    csrfToken: 'the-session-token',
    expiresAt: Date.now() + 60_000,
    sessionHash: 'the-session-hash',
    access: new Access(true, new Map()),
  };
  let found: DashboardSession | null;
  const find = jest.fn(() => Promise.resolve(found));
  const auth = new DashboardAuth({ find } as unknown as SessionsService);
  const sessionGuard = new DashboardSessionGuard(new Reflector(), auth);
  const csrfGuard = new CsrfGuard(new Reflector(), auth);

  const request = (more: Partial<DashboardRequest> = {}) =>
    ({ headers: { host: 'localhost' }, ...more }) as DashboardRequest;
  const handlers = DashboardController.prototype as unknown as Record<string, () => unknown>;
  const contextOf = (req: DashboardRequest, handler: keyof DashboardController) =>
    new ExecutionContextHost([req, {}], DashboardController, handlers[handler]);

  beforeEach(() => {
    found = null;
    find.mockClear();
  });

  it('refuses a route without a public mark when nobody is signed in', async () => {
    await expect(sessionGuard.canActivate(contextOf(request(), 'settings'))).rejects.toThrow(
      SignInRequiredException,
    );
  });

  it('attaches the session of a signed-in admin', async () => {
    found = session;
    const req = request();
    await expect(sessionGuard.canActivate(contextOf(req, 'settings'))).resolves.toBe(true);
    expect(req.dashboardSession).toBe(session);
  });

  it('lets public routes through, loading the session only when asked to', async () => {
    const asset = request();
    await expect(sessionGuard.canActivate(contextOf(asset, 'asset'))).resolves.toBe(true);
    expect(find).not.toHaveBeenCalled();
    expect(asset.dashboardSession).toBeUndefined();
    const signIn = request();
    await expect(sessionGuard.canActivate(contextOf(signIn, 'signInForm'))).resolves.toBe(true);
    expect(signIn.dashboardSession).toBeNull();
  });

  it('checks the form token against the session, and passes routes without a CSRF mark', () => {
    const signedIn = (body: unknown) => request({ dashboardSession: session, body });
    expect(csrfGuard.canActivate(contextOf(signedIn({}), 'settings'))).toBe(true);
    expect(() => csrfGuard.canActivate(contextOf(signedIn({ _csrf: 'x' }), 'generate'))).toThrow(
      CsrfRejectedException,
    );
    expect(
      csrfGuard.canActivate(contextOf(signedIn({ _csrf: session.csrfToken }), 'generate')),
    ).toBe(true);
    // Signing out with no session: nothing to forge, as before the guards.
    expect(csrfGuard.canActivate(contextOf(request({ dashboardSession: null }), 'signOut'))).toBe(
      true,
    );
  });

  it('fails loudly when a session-bound CSRF check runs where no session was loaded', () => {
    expect(() => csrfGuard.canActivate(contextOf(request({ body: {} }), 'generate'))).toThrow(
      /loads no session/,
    );
  });
});
