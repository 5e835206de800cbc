import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { parseTokenScopes } from '../../auth/token-scopes';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { toQuest } from '../../quests/quest.mapper';
import { QuestsService } from '../../quests/quests.service';
import { RateLimiter } from '../rate-limit/rate-limiter.service';
import { toSpace, toSprint } from '../../spaces/space.mapper';
import { SpacesService } from '../../spaces/spaces.service';
import { AdminsService } from './admins.service';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieHeader, readCookie } from './cookies';
import { DashboardAuth, sameOrigin, tokensMatch } from './dashboard-auth.service';
import { DashboardSession, SESSION_TTL_MS, SessionsService } from './sessions.service';
import type { SafeHtml } from './views/html';
import {
  revokePage,
  settingsPage,
  signInPage,
  spacePage,
  spacesPage,
  SpaceView,
} from './views/pages';

type Form = Record<string, unknown>;

/**
 * Sign-in limits. Every attempt spends its client address's budget (50 in 15 minutes: room for an
 * office behind one address, not for a sweep). Only failures spend an account's: 10 per email from
 * one address, 100 per email from anywhere, so guessing stops while nobody elsewhere can lock the
 * real admin out with ten wrong passwords.
 */
const SIGN_IN_RULES = {
  address: [{ name: 'sign-in-address', limit: 50, ttlMs: 15 * 60_000 }],
  emailFromAddress: [{ name: 'sign-in-failures', limit: 10, ttlMs: 15 * 60_000 }],
  email: [{ name: 'sign-in-failures-any', limit: 100, ttlMs: 15 * 60_000 }],
};
const FAILED_SIGN_IN_DELAY_MS = 500;

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

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

/** The dashboard: server-rendered pages over the same services as /query. */
@Controller('dashboard')
export class DashboardController {
  constructor(
    private readonly auth: DashboardAuth,
    private readonly admins: AdminsService,
    private readonly sessions: SessionsService,
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly leaderboards: LeaderboardsService,
    private readonly quests: QuestsService,
    private readonly profiles: ProfilesService,
    private readonly limiter: RateLimiter,
  ) {}

  @Get()
  async home(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<unknown> {
    const session = await this.auth.sessionOf(request);
    return reply.redirect(session ? '/dashboard/settings' : '/dashboard/sign-in', 303);
  }

  @Get('assets/:file')
  asset(@Res() reply: FastifyReply, @Param('file') file: string): FastifyReply {
    const asset = ASSETS[file];
    if (!asset) return reply.code(404).type('text/plain').send('Not found');
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  }

  @Get('sign-in')
  async signInForm(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<unknown> {
    if (await this.auth.sessionOf(request)) return reply.redirect('/dashboard/settings', 303);
    return this.showSignIn(request, reply, 200);
  }

  @Post('sign-in')
  async signIn(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<unknown> {
    const form = body ?? {};
    const email = text(form.email).trim();
    if (
      !sameOrigin(request) ||
      !tokensMatch(readCookie(request, SIGN_IN_CSRF_COOKIE) ?? '', form._csrf)
    ) {
      return this.showSignIn(
        request,
        reply,
        403,
        'The sign-in form expired. Please try again.',
        email,
      );
    }
    const account = email.toLowerCase();
    const failureKeys: Array<[string, typeof SIGN_IN_RULES.email]> = [
      [`sign-in:failures:${account}:${request.ip}`, SIGN_IN_RULES.emailFromAddress],
      [`sign-in:failures:${account}`, SIGN_IN_RULES.email],
    ];
    const tooManyAttempts = (retryAfterSeconds: number) => {
      void reply.header('retry-after', retryAfterSeconds);
      const minutes = Math.ceil(retryAfterSeconds / 60);
      return this.showSignIn(
        request,
        reply,
        429,
        `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        email,
      );
    };
    const addressDecision = await this.limiter.consume(
      `sign-in:address:${request.ip}`,
      SIGN_IN_RULES.address,
    );
    if (addressDecision && !addressDecision.allowed)
      return tooManyAttempts(addressDecision.retryAfterSeconds);
    for (const [key] of failureKeys) {
      const blockedFor = this.limiter.blockedFor(key);
      if (blockedFor > 0) return tooManyAttempts(blockedFor);
    }
    const admin = await this.admins.verify(email, text(form.password));
    if (!admin) {
      await new Promise((resolve) => setTimeout(resolve, FAILED_SIGN_IN_DELAY_MS));
      for (const [key, rules] of failureKeys) {
        const decision = await this.limiter.consume(key, rules);
        if (decision && !decision.allowed) return tooManyAttempts(decision.retryAfterSeconds);
      }
      return this.showSignIn(request, reply, 401, 'Email or password is incorrect.', email);
    }
    const { cookie } = await this.sessions.start(admin.id);
    void reply.header('set-cookie', [
      cookieHeader(request, SESSION_COOKIE, cookie, SESSION_TTL_MS / 1000),
      cookieHeader(request, SIGN_IN_CSRF_COOKIE, '', 0),
    ]);
    return reply.redirect('/dashboard/settings', 303);
  }

  @Post('sign-out')
  async signOut(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<unknown> {
    const form = body ?? {};
    const session = await this.auth.sessionOf(request);
    if (session && !this.auth.csrfOk(request, session.csrfToken, form._csrf))
      return this.forbidden(reply, session);
    await this.sessions.end(readCookie(request, SESSION_COOKIE));
    void reply.header('set-cookie', cookieHeader(request, SESSION_COOKIE, '', 0));
    return reply.redirect('/dashboard/sign-in', 303);
  }

  /** For scripts: who is signed in, and the CSRF token to send in `x-csrf-token`. */
  @Get('session')
  async session(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<unknown> {
    const session = await this.auth.sessionOf(request);
    if (!session)
      return reply.code(401).header('cache-control', 'no-store').send({ signedIn: false });
    return reply
      .header('cache-control', 'no-store')
      .send({ signedIn: true, email: session.email, csrfToken: session.csrfToken });
  }

  @Get('settings')
  async settings(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('notice') notice?: string,
  ): Promise<unknown> {
    const session = await this.signedIn(request, reply);
    if (!session) return reply;
    const message = notice === 'revoked' ? 'The token was revoked.' : undefined;
    return this.page(
      reply,
      200,
      settingsPage(session, { tokens: await this.tokens.list(), notice: message }),
    );
  }

  @Post('settings/server-api/tokens')
  async generate(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<unknown> {
    const form = body ?? {};
    const session = await this.signedIn(request, reply, form);
    if (!session) return reply;
    // Unchecked boxes are not sent: no scope at all is refused, never read as the default.
    const scopes = values(form.scopes);
    try {
      const created = await this.tokens.create(text(form.name), parseTokenScopes(scopes));
      return this.page(
        reply,
        201,
        settingsPage(session, { tokens: await this.tokens.list(), created }),
      );
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      return this.page(
        reply,
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
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<unknown> {
    const session = await this.signedIn(request, reply);
    if (!session) return reply;
    const token = (await this.tokens.list()).find((t) => t.id === id);
    if (!token) {
      return this.page(
        reply,
        404,
        settingsPage(session, {
          tokens: await this.tokens.list(),
          error: 'That token does not exist or was revoked already.',
        }),
      );
    }
    return this.page(reply, 200, revokePage(session, token));
  }

  @Post('settings/server-api/tokens/:id/revoke')
  async revoke(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<unknown> {
    const form = body ?? {};
    const session = await this.signedIn(request, reply, form);
    if (!session) return reply;
    await this.tokens.revoke(id);
    return reply.redirect('/dashboard/settings?notice=revoked#server-api', 303);
  }

  @Get('spaces')
  async spaceList(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<unknown> {
    const session = await this.signedIn(request, reply);
    if (!session) return reply;
    return this.page(
      reply,
      200,
      spacesPage(session, (await this.spaces.listSpaces()).map(toSpace)),
    );
  }

  @Get('spaces/:id')
  async space(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<unknown> {
    const session = await this.signedIn(request, reply);
    if (!session) return reply;
    const spaceId = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    const entity = Number.isSafeInteger(spaceId) ? await this.spaces.findSpace(spaceId) : null;
    if (!entity)
      return this.page(
        reply,
        404,
        spacesPage(session, (await this.spaces.listSpaces()).map(toSpace)),
      );
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
    return this.page(reply, view.error ? 400 : 200, spacePage(session, view));
  }

  private showSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    error?: string,
    email?: string,
  ): FastifyReply {
    const csrfToken = randomBytes(32).toString('base64url');
    void reply.header('set-cookie', cookieHeader(request, SIGN_IN_CSRF_COOKIE, csrfToken, 3600));
    return this.page(reply, status, signInPage({ csrfToken, error, email }));
  }

  private page(reply: FastifyReply, status: number, body: SafeHtml): FastifyReply {
    return reply.code(status).headers(PAGE_HEADERS).send(body.toString());
  }

  /**
   * The signed-in admin, or null once the answer is sent: a redirect to sign-in, or 403 when a
   * state change (`form` given) lacks this session's CSRF token.
   */
  private async signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    form?: Form,
  ): Promise<DashboardSession | null> {
    const session = await this.auth.sessionOf(request);
    if (!session) {
      await reply.redirect('/dashboard/sign-in', 303);
      return null;
    }
    if (form && !this.auth.csrfOk(request, session.csrfToken, form._csrf)) {
      await this.forbidden(reply, session);
      return null;
    }
    return session;
  }

  private async forbidden(reply: FastifyReply, session: DashboardSession): Promise<unknown> {
    return this.page(
      reply,
      403,
      settingsPage(session, {
        tokens: await this.tokens.list(),
        error: 'That form expired or came from another site. Please try again.',
      }),
    );
  }
}
