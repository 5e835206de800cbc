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
import { AccessTokensService } from '../../auth/access-tokens.service';
import { parseTokenScopes } from '../../auth/token-scopes';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { toQuest } from '../../quests/quest.mapper';
import { QuestsService } from '../../quests/quests.service';
import { toSpace, toSprint } from '../../spaces/space.mapper';
import { SpacesService } from '../../spaces/spaces.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { PublicDashboardRoute } from './public-dashboard-route.decorator';
import { AdminsService } from './admins.service';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieHeader, readCookie } from './cookies';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { sendSignInPage } from './page-answers';
import { DashboardSession, SESSION_TTL_MS, SessionsService } from './sessions.service';
import { SignInThrottle } from './sign-in-throttle.service';
import type { SafeHtml } from './views/html';
import { revokePage, settingsPage, spacePage, spacesPage, SpaceView } from './views/pages';

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
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly leaderboards: LeaderboardsService,
    private readonly quests: QuestsService,
    private readonly profiles: ProfilesService,
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
      const waitAfterFailure = await this.throttle.failed(request.ip, email);
      if (waitAfterFailure > 0) return tooManyAttempts(waitAfterFailure);
      return sendSignInPage(request, reply, 401, 'Email or password is incorrect.', email);
    }
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
    return settingsPage(session, { tokens: await this.tokens.list(), notice: message });
  }

  @Post('settings/server-api/tokens')
  @CsrfProtected({ from: 'form' })
  async generate(
    @CurrentSession() session: DashboardSession,
    @Body() body: Form | undefined,
  ): Promise<SafeHtml> {
    const form = body ?? {};
    // Unchecked boxes are not sent: no scope at all is refused, never read as the default.
    const scopes = values(form.scopes);
    try {
      const created = await this.tokens.create(text(form.name), parseTokenScopes(scopes));
      return settingsPage(session, { tokens: await this.tokens.list(), created });
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      throw new DashboardPageException(
        400,
        settingsPage(session, {
          tokens: await this.tokens.list(),
          error: error.message,
          form: { name: text(form.name), scopes: scopes.filter((s) => typeof s === 'string') },
        }),
      );
    }
  }

  @Get('settings/server-api/tokens/:id/revoke')
  async confirmRevoke(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const token = (await this.tokens.list()).find((t) => t.id === id);
    if (!token) {
      throw new DashboardPageException(
        404,
        settingsPage(session, {
          tokens: await this.tokens.list(),
          error: 'That token does not exist or was revoked already.',
        }),
      );
    }
    return revokePage(session, token);
  }

  @Post('settings/server-api/tokens/:id/revoke')
  @CsrfProtected({ from: 'form' })
  @Redirect('/dashboard/settings?notice=revoked#server-api', 303)
  async revoke(@Param('id') id: string): Promise<void> {
    await this.tokens.revoke(id);
  }

  @Get('spaces')
  async spaceList(@CurrentSession() session: DashboardSession): Promise<SafeHtml> {
    return spacesPage(session, (await this.spaces.listSpaces()).map(toSpace));
  }

  @Get('spaces/:id')
  async space(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    const spaceId = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    const entity = Number.isSafeInteger(spaceId) ? await this.spaces.findSpace(spaceId) : null;
    if (!entity) {
      throw new DashboardPageException(
        404,
        spacesPage(session, (await this.spaces.listSpaces()).map(toSpace)),
      );
    }
    const sprints = (await this.spaces.listSprints(entity.id)).map(toSprint);
    const sprint = param(query.sprint);
    const sprintId = sprint && /^\d{1,10}$/.test(sprint) ? Number(sprint) : null;
    const view: SpaceView = {
      space: toSpace(entity),
      sprints,
      sprintId,
      board: null,
      addresses: new Map(),
      quests: (await this.quests.listQuests(entity.id)).map(toQuest),
    };
    try {
      view.board = await this.leaderboards.getPage(entity.id, sprintId, {
        cursorAfter: param(query.after),
        cursorBefore: param(query.before),
      });
      const addresses = await this.profiles.loadAddresses(
        view.board.list.map((entry) => entry.addressKey),
      );
      view.addresses = new Map(addresses.map((address) => [address.id, address]));
      const address = (param(query.address) ?? '').trim();
      if (address) {
        const rank = await this.leaderboards.getAddressRank(entity.id, address, sprintId);
        view.search = { address, rank: rank ? { rank: rank.rank, points: rank.points } : null };
      }
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      view.error = `${error.message}. Showing nothing for this selection; start again from the first page.`;
    }
    const page = spacePage(session, view);
    if (view.error) throw new DashboardPageException(400, page);
    return page;
  }
}
