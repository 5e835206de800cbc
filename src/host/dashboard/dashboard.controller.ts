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
import type { AccessTokenInfo } from '../../auth/access-tokens.service';
import { parseRotationGrace, parseTokenExpiry } from '../../auth/token-expiry';
import { parseTokenScopes } from '../../auth/token-scopes';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AuditService, failedSignIn } from './audit/audit.service';
import { DashboardViews } from './dashboard-views.service';
import { TokenActions } from './token-actions.service';
import { refusalOf } from './page-refusals';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { PublicDashboardRoute } from './public-dashboard-route.decorator';
import { AdminsService } from './accounts/admins.service';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieHeader, readCookie } from './cookies';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { sendSignInPage } from './page-answers';
import { DashboardSession, SESSION_TTL_MS, SessionsService } from './accounts/sessions.service';
import { SignInThrottle } from './sign-in-throttle.service';
import type { SafeHtml } from './views/html';
import { revokePage, rotatePage } from './views/pages';

type Form = Record<string, unknown>;

const ASSETS: Record<string, { type: string; body: string }> = {
  'dashboard.css': { type: 'text/css; charset=utf-8', body: DASHBOARD_CSS },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: DASHBOARD_JS },
};

const text = (value: unknown) => (typeof value === 'string' ? value : '');
/** A form field that may repeat (checkboxes of one name): every value sent, none when absent. */
const values = (value: unknown): unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
/** A query-string value as one string: a repeated parameter is not a second value. */
const param = (value: unknown) => (typeof value === 'string' ? value : undefined);

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
  ): FastifyReply {
    if (session) return reply.redirect('/dashboard/settings', 303);
    return sendSignInPage(request, reply, 200);
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
    const tooManyAttempts = (retryAfterSeconds: number) => {
      void reply.header('retry-after', retryAfterSeconds);
      const minutes = Math.ceil(retryAfterSeconds / 60);
      return sendSignInPage(
        request,
        reply,
        429,
        `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        email,
      );
    };
    const wait = await this.throttle.admit(request.ip, email);
    if (wait > 0) return tooManyAttempts(wait);
    const admin = await this.admins.verify(email, text(form.password));
    if (!admin) {
      await this.throttle.failed();
      await this.audit.record(await failedSignIn(this.admins, email, request.ip));
      return sendSignInPage(request, reply, 401, 'Email or password is incorrect.', email);
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
    return reply.redirect('/dashboard/settings', 303);
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

  @Get('settings')
  async settings(
    @CurrentSession() session: DashboardSession,
    @Query('notice') notice?: string,
  ): Promise<SafeHtml> {
    const message = notice === 'revoked' ? 'The token was revoked.' : undefined;
    return this.views.settings(session, { notice: message });
  }

  @Post('settings/server-api/tokens')
  @CsrfProtected({ from: 'form' })
  async generate(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Body() body: Form | undefined,
  ): Promise<SafeHtml> {
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
      return await this.views.settings(session, { created });
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
  @Redirect('/dashboard/settings?notice=revoked#server-api', 303)
  async revoke(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
  ): Promise<void> {
    try {
      await this.actions.revoke(session, id, request.ip);
    } catch (error) {
      throw await this.pageRefusal(session, error);
    }
  }

  @Get('settings/server-api/tokens/:id/rotate')
  async confirmRotate(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    return rotatePage(session, await this.manageable(session, id));
  }

  /** No redirect: the new value is shown this once, like a generated token. */
  @Post('settings/server-api/tokens/:id/rotate')
  @CsrfProtected({ from: 'form' })
  async rotate(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SafeHtml> {
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
    return this.views.settings(session, {
      rotated: {
        token: rotated.token,
        previousUntil: graceMs === 0 ? null : rotated.previous.expiresAt,
      },
    });
  }

  @Get('spaces')
  async spaceList(@CurrentSession() session: DashboardSession): Promise<SafeHtml> {
    return this.views.spacesPage(session);
  }

  @Get('spaces/:id')
  async space(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    const notice = SPACE_NOTICES[param(query.notice) ?? ''];
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

/** The notices the space page shows after its forms (Post/Redirect/Get). */
const SPACE_NOTICES: Record<string, string | undefined> = {
  adjusted: 'The points were adjusted.',
  private: 'The space is private now: only its own tokens and deployment tokens read it.',
  public: 'The space is public now: every token with the query scope reads it.',
};

/** The generate form's expiry: a choice, or `date` with the date field; absent: never. */
function formExpiry(choice: unknown, date: unknown): number | null {
  if (choice === undefined || choice === '') return null;
  if (choice !== 'date') return parseTokenExpiry(choice);
  if (typeof date !== 'string' || date.trim() === '')
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Choose the date the token expires');
  return parseTokenExpiry(date);
}
