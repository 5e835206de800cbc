import {
  Body,
  Controller,
  Get,
  Param,
  Post,
  Query,
  Redirect,
  Req,
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokenInfo, CreatedAccessToken } from '../../auth/access-tokens.service';
import { parseRotationGrace, parseTokenExpiry } from '../../auth/token-expiry';
import { parseTokenScopes } from '../../auth/token-scopes';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AuditService, failedSignIn } from './audit/audit.service';
import { DashboardAuth } from './dashboard-auth.service';
import { DashboardViews } from './dashboard-views.service';
import { TokenActions } from './token-actions.service';
import { refusalOf } from './page-refusals';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { PublicDashboardRoute } from './public-dashboard-route.decorator';
import { AdminsService } from './accounts/admins.service';
import { DASHBOARD_CSS, DASHBOARD_JS, FAVICON_SVG } from './assets';
import { BOARD_CSS, BOARD_JS } from './views/board-assets';
import { CONTENT_CSS, CONTENT_JS } from './views/content-assets';
import { POINTS_CSS, POINTS_JS } from './views/points-assets';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieHeader, readCookie } from './cookies';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { sendSignInPage } from './page-answers';
import { DashboardSession, SESSION_TTL_MS, SessionsService } from './accounts/sessions.service';
import { SignInThrottle } from './sign-in-throttle.service';
import { setNotice, takeNotice } from './notices';
import { HOME_PATH, safeReturnPath } from './sign-in-return';
import { Form, SeeOther, seeOther, text, values } from './form-fields';
import type { SafeHtml } from './views/html';
import { RevealedToken, revokePage, rotatePage, spacesPage } from './views/pages';

const SETTINGS = '/dashboard/settings';

const ASSETS: Record<string, { type: string; body: string }> = {
  'dashboard.css': {
    type: 'text/css; charset=utf-8',
    body: [DASHBOARD_CSS, BOARD_CSS, CONTENT_CSS, POINTS_CSS].join('\n'),
  },
  'dashboard.js': {
    type: 'text/javascript; charset=utf-8',
    body: [DASHBOARD_JS, BOARD_JS, CONTENT_JS, POINTS_JS].join('\n'),
  },
  'favicon.svg': { type: 'image/svg+xml', body: FAVICON_SVG },
};

/**
 * The dashboard: server-rendered pages over the same services as /query. Every route needs a
 * signed-in admin unless marked public; pages are returned as SafeHtml, other statuses thrown.
 */
@Controller('dashboard')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(DashboardPageFilter)
@UseInterceptors(HtmlPageInterceptor)
export class DashboardController {
  constructor(
    private readonly admins: AdminsService,
    private readonly sessions: SessionsService,
    private readonly throttle: SignInThrottle,
    private readonly audit: AuditService,
    private readonly views: DashboardViews,
    private readonly auth: DashboardAuth,
    private readonly actions: TokenActions,
  ) {}

  /** The guard sends whoever is not signed in to the sign-in page. */
  @Get()
  @Redirect('/dashboard/settings', 303)
  home(): void {}

  @Get('assets/:file')
  @PublicDashboardRoute()
  asset(@Res() reply: FastifyReply, @Param('file') file: string): FastifyReply {
    const asset = ASSETS[file];
    if (!asset) return reply.code(404).type('text/plain').send('Not found');
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  }

  /** @Res(): a redirect or a page, and either way a cookie. */
  @Get('sign-in')
  @PublicDashboardRoute({ session: 'optional' })
  signInForm(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @CurrentSession() session: DashboardSession | null,
    @Query('next') next?: unknown,
  ): FastifyReply {
    const back = safeReturnPath(next);
    if (session) return reply.redirect(back ?? HOME_PATH, 303);
    return sendSignInPage(request, reply, 200, { notice: takeNotice(request, reply), next: back });
  }

  /** @Res(): a redirect with the session cookie, or the form again with a status of its own. */
  @Post('sign-in')
  @PublicDashboardRoute()
  @CsrfProtected({ from: 'form', against: 'sign-in-cookie' })
  async signIn(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<FastifyReply> {
    const form = body ?? {};
    const email = text(form.email).trim();
    const next = safeReturnPath(form.next);
    const tooManyAttempts = (retryAfterSeconds: number) => {
      void reply.header('retry-after', retryAfterSeconds);
      const minutes = Math.ceil(retryAfterSeconds / 60);
      return sendSignInPage(request, reply, 429, {
        error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        email,
        next,
      });
    };
    const wait = await this.throttle.admit(request.ip, email);
    if (wait > 0) return tooManyAttempts(wait);
    const admin = await this.admins.verify(email, text(form.password));
    if (!admin) {
      await this.throttle.failed();
      await this.audit.record(await failedSignIn(this.admins, email, request.ip));
      return sendSignInPage(request, reply, 401, {
        error: 'Email or password is incorrect.',
        email,
        next,
      });
    }
    await this.throttle.succeeded(request.ip, email);
    await this.audit.record({
      actor: { id: admin.id, email: admin.email },
      action: 'sign-in',
      address: request.ip,
    });
    const { cookie } = await this.sessions.start(admin.id);
    void reply.header('set-cookie', [
      cookieHeader(request, SESSION_COOKIE, cookie, SESSION_TTL_MS / 1000),
      cookieHeader(request, SIGN_IN_CSRF_COOKIE, '', 0),
    ]);
    // Back to the page the admin was on when the session ended, else home.
    return reply.redirect(next ?? HOME_PATH, 303);
  }

  /** Public so that signing out with a stale cookie still clears it; checked when signed in. */
  @Post('sign-out')
  @PublicDashboardRoute({ session: 'optional' })
  @CsrfProtected({ from: 'form' })
  @Redirect('/dashboard/sign-in', 303)
  async signOut(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    await this.sessions.end(readCookie(request, SESSION_COOKIE));
    void reply.header('set-cookie', cookieHeader(request, SESSION_COOKIE, '', 0));
    setNotice(request, reply, 'signed-out');
  }

  /** For scripts: who is signed in, and the CSRF token to send in `x-csrf-token`. */
  @Get('session')
  @PublicDashboardRoute({ session: 'optional' })
  session(
    @Res() reply: FastifyReply,
    @CurrentSession() session: DashboardSession | null,
  ): FastifyReply {
    void reply.header('cache-control', 'no-store');
    if (!session) return reply.code(401).send({ signedIn: false });
    return reply.send({ signedIn: true, email: session.email, csrfToken: session.csrfToken });
  }

  /** With, this once, the value a generate or rotate form's redirect handed over. */
  @Get('settings')
  async settings(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SafeHtml> {
    const notice = takeNotice(request, reply);
    const shown = this.auth.reveals.take(request, reply, session.sessionHash, ['token', 'rotated']);
    return this.views.settings(session, {
      notice,
      created: shown?.kind === 'token' ? shown.token : undefined,
      rotated: shown?.kind === 'rotated' ? shown : undefined,
    });
  }

  /** Post/Redirect/Get: the new value rides to the settings page in a sealed one-time cookie. */
  @Post('settings/server-api/tokens')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async generate(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const form = body ?? {};
    // Unchecked boxes are not sent: no scope at all is refused, never read as the default.
    const scopes = values(form.scopes);
    try {
      const created = await this.actions.create(
        session,
        {
          name: text(form.name),
          scopes: parseTokenScopes(scopes),
          spaceId: form.spaceId,
          expiresAt: formExpiry(form.expires, form.expiresOn),
        },
        request.ip,
      );
      this.auth.reveals.put(request, reply, session.sessionHash, {
        kind: 'token',
        token: revealed(created),
      });
      return seeOther(SETTINGS);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw new DashboardPageException(
        refusal.status,
        await this.views.settings(session, {
          error: refusal.message,
          form: {
            name: text(form.name),
            scopes: scopes.filter((s): s is string => typeof s === 'string'),
            spaceId: text(form.spaceId),
            expires: text(form.expires),
            expiresOn: text(form.expiresOn),
          },
        }),
      );
    }
  }

  @Get('settings/server-api/tokens/:id/revoke')
  async confirmRevoke(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    return revokePage(session, await this.manageable(session, id));
  }

  @Post('settings/server-api/tokens/:id/revoke')
  @CsrfProtected({ from: 'form' })
  @Redirect(SETTINGS, 303)
  async revoke(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    try {
      await this.actions.revoke(session, id, request.ip);
    } catch (error) {
      throw await this.pageRefusal(session, error);
    }
    setNotice(request, reply, 'token.revoked');
  }

  @Get('settings/server-api/tokens/:id/rotate')
  async confirmRotate(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    return rotatePage(session, await this.manageable(session, id));
  }

  /** Post/Redirect/Get: the new value is shown this once on the settings page, as a new token's. */
  @Post('settings/server-api/tokens/:id/rotate')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async rotate(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const token = await this.manageable(session, id);
    const grace = (body ?? {}).graceSeconds;
    let graceMs: number;
    try {
      graceMs = parseRotationGrace(grace ?? 0);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw new DashboardPageException(
        refusal.status,
        rotatePage(session, token, { error: refusal.message }),
      );
    }
    let rotated: Awaited<ReturnType<TokenActions['rotate']>>;
    try {
      rotated = await this.actions.rotate(session, token.id, graceMs, request.ip);
    } catch (error) {
      throw await this.pageRefusal(session, error);
    }
    this.auth.reveals.put(request, reply, session.sessionHash, {
      kind: 'rotated',
      token: revealed(rotated.token),
      previousUntil: graceMs === 0 ? null : rotated.previous.expiresAt,
    });
    return seeOther(SETTINGS);
  }

  @Get('spaces')
  async spaceList(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SafeHtml> {
    return spacesPage(session, await this.views.spaceList(session), {
      notice: takeNotice(request, reply),
    });
  }

  /** `address` stays in the query: the points form's redirect names the address it changed. */
  @Get('spaces/:id')
  async space(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    const notice = takeNotice(request, reply);
    const { status, page } = await this.views.space(session, id, query, { notice });
    if (status !== 200) throw new DashboardPageException(status, page);
    return page;
  }

  /** A live token the account may manage; any other, existing or not, is "does not exist". */
  private async manageable(session: DashboardSession, id: string): Promise<AccessTokenInfo> {
    try {
      return await this.actions.manageable(session, id);
    } catch (error) {
      throw await this.pageRefusal(session, error);
    }
  }

  /** A token action's refusal as the Server API page shows it. */
  private async pageRefusal(session: DashboardSession, error: unknown): Promise<unknown> {
    if (error instanceof LoyaltyException && error.code === ErrorCode.TOKEN_NOT_FOUND)
      return this.tokenGone(session);
    const refusal = refusalOf(error);
    if (!refusal) return error;
    return new DashboardPageException(
      refusal.status,
      await this.views.settings(session, { error: refusal.message }),
    );
  }

  private async tokenGone(session: DashboardSession): Promise<DashboardPageException> {
    return new DashboardPageException(
      404,
      await this.views.settings(session, {
        error: 'That token does not exist or was revoked already.',
      }),
    );
  }
}

/** What the settings page shows of a new token: its value and what its box names. */
function revealed(token: CreatedAccessToken): RevealedToken {
  return {
    name: token.name,
    token: token.token,
    scopes: token.scopes,
    spaceId: token.spaceId,
    expiresAt: token.expiresAt,
  };
}

/** The generate form's expiry: a choice, or `date` with the date field; absent: never. */
function formExpiry(choice: unknown, date: unknown): number | null {
  if (choice === undefined || choice === '') return null;
  if (choice !== 'date') return parseTokenExpiry(choice);
  if (typeof date !== 'string' || date.trim() === '')
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Choose the date the token expires');
  return parseTokenExpiry(date);
}
