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
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { SpaceEntity } from '../../spaces/space.entity';
import { SpacesService } from '../../spaces/spaces.service';
import { AccountActions } from './account-actions.service';
import { TeamActions } from './team-actions.service';
import { AdminInputError, AdminsService } from './accounts/admins.service';
import { AuditService, AUDIT_ID, failedSignIn } from './audit/audit.service';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE, cookieHeader, readCookie } from './cookies';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { DashboardAuth } from './dashboard-auth.service';
import { DashboardViews } from './dashboard-views.service';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { issueSignInFormToken, sendPage } from './page-answers';
import { setNotice, takeNotice } from './notices';
import { refusalOf } from './page-refusals';
import { PublicDashboardRoute } from './public-dashboard-route.decorator';
import { DashboardSession, SESSION_TTL_MS, SessionsService } from './accounts/sessions.service';
import { SignInThrottle } from './sign-in-throttle.service';
import { invitationLink } from './teams-api.controller';
import { MembersService, OpenInvitation } from './accounts/members.service';
import { requireOperator } from './accounts/space-access';
import { Form, keepTokensOf, param, SeeOther, seeOther, text } from './form-fields';
import type { SafeHtml } from './views/html';
import {
  accountPage,
  accountsPage,
  auditPage,
  invitationGonePage,
  invitationPage,
  InvitationView,
  membersPage,
  MembersView,
  messagePage,
  removeAccountPage,
} from './views/team-pages';

/** Entries on one page of the audit trail. */
const AUDIT_PAGE_SIZE = 50;

const ACCOUNT_NOTICES = {
  disable: 'account.disabled',
  enable: 'account.enabled',
  remove: 'account.removed',
} as const;

/**
 * The team pages: a space's members and invitations, its privacy and points forms, accepting an
 * invitation, one's own account, the accounts of the deployment and the audit trail. The same
 * services, checks and audit entries as the settings endpoints, as browser forms.
 */
@Controller('dashboard')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(DashboardPageFilter)
@UseInterceptors(HtmlPageInterceptor)
export class TeamsPagesController {
  constructor(
    private readonly admins: AdminsService,
    private readonly sessions: SessionsService,
    private readonly members: MembersService,
    private readonly audit: AuditService,
    private readonly spaces: SpacesService,
    private readonly throttle: SignInThrottle,
    private readonly actions: AccountActions,
    private readonly team: TeamActions,
    private readonly views: DashboardViews,
    private readonly auth: DashboardAuth,
    private readonly tokens: AccessTokensService,
  ) {}

  @Post('spaces/:id/privacy')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async setPrivacy(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    const choice = (body ?? {}).private;
    if (choice !== 'true' && choice !== 'false') {
      const { page } = await this.views.space(session, id, {});
      throw new DashboardPageException(400, page);
    }
    const isPrivate = choice === 'true';
    try {
      await this.team.setPrivacy(session, space.id, isPrivate, request.ip);
    } catch (error) {
      if (error instanceof LoyaltyException && error.code === ErrorCode.SPACE_NOT_FOUND)
        throw this.views.spaceNotFound(session);
      throw error;
    }
    setNotice(request, reply, isPrivate ? 'space.private' : 'space.public');
    return seeOther(`/dashboard/spaces/${space.id}`);
  }

  /** With, this once, the link an invite form's redirect handed over. */
  @Get('spaces/:id/members')
  async memberList(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    const shown = this.auth.reveals.take(
      request,
      reply,
      session.sessionHash,
      ['invitation'],
      (reveal) => reveal.spaceId === space.id,
    );
    return this.renderMembers(session, space, {
      notice: takeNotice(request, reply),
      created: shown?.invitation,
    });
  }

  /** Post/Redirect/Get: the link rides to the members page in a sealed one-time cookie. */
  @Post('spaces/:id/invitations')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async invite(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    const form = body ?? {};
    try {
      const invitation = await this.team.invite(session, space.id, form, request.ip);
      this.auth.reveals.put(request, reply, session.sessionHash, {
        kind: 'invitation',
        spaceId: space.id,
        invitation: {
          id: invitation.id,
          email: invitation.email,
          role: invitation.role,
          expiresAt: invitation.expiresAt,
          link: invitationLink(request, invitation.path),
        },
      });
      return seeOther(`/dashboard/spaces/${space.id}/members`);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw new DashboardPageException(
        refusal.status,
        await this.renderMembers(session, space, {
          error: refusal.message,
          form: { email: text(form.email), role: text(form.role) },
        }),
      );
    }
  }

  @Post('spaces/:id/invitations/:invitationId/withdraw')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async withdraw(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('invitationId') invitationId: string,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    try {
      await this.team.withdraw(session, space.id, invitationId, request.ip);
    } catch (error) {
      if (!(error instanceof LoyaltyException && error.code === ErrorCode.INVITATION_NOT_FOUND))
        throw error;
      throw new DashboardPageException(
        404,
        await this.renderMembers(session, space, {
          error: 'That invitation does not exist, or was used or withdrawn already.',
        }),
      );
    }
    setNotice(request, reply, 'invitation.withdrawn');
    return seeOther(`/dashboard/spaces/${space.id}/members`);
  }

  @Post('spaces/:id/members/:accountId/role')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async setRole(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('accountId') accountId: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    const role = await this.memberChange(session, space, () =>
      this.team.setRole(session, space.id, accountId, (body ?? {}).role, request.ip),
    );
    setNotice(request, reply, 'member.role');
    // Who gave up owning the space can no longer open its members page.
    const ownRole = accountId === session.adminId && !session.access.operator;
    return seeOther(
      ownRole && role !== 'owner'
        ? `/dashboard/spaces/${space.id}`
        : `/dashboard/spaces/${space.id}/members`,
    );
  }

  @Post('spaces/:id/members/:accountId/remove')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async removeMember(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('accountId') accountId: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    await this.memberChange(session, space, () =>
      this.team.removeMember(session, space.id, accountId, request.ip, {
        keepTokens: keepTokensOf((body ?? {}).keepTokens),
      }),
    );
    const left = accountId === session.adminId && !session.access.operator;
    setNotice(request, reply, left ? 'member.left' : 'member.removed');
    return seeOther(left ? '/dashboard/spaces' : `/dashboard/spaces/${space.id}/members`);
  }

  /** @Res(): the form carries a fresh double-submit token, set as a cookie. */
  @Get('invitations/:secret')
  @PublicDashboardRoute({ session: 'optional' })
  async invitation(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @CurrentSession() session: DashboardSession | null,
    @Param('secret') secret: string,
  ): Promise<FastifyReply> {
    const open = await this.members.findOpen(secret);
    if (!open) return sendPage(reply, 404, invitationGonePage());
    return this.sendInvitation(request, reply, 200, open, secret, {
      signedInAs: session?.email,
    });
  }

  /**
   * @Res(): a redirect into the space with a new session cookie, or the form again. An existing
   * account's password is checked under the sign-in limits, as on the sign-in form.
   */
  @Post('invitations/:secret')
  @PublicDashboardRoute()
  @CsrfProtected({ from: 'form', against: 'sign-in-cookie' })
  async acceptInvitation(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('secret') secret: string,
    @Body() body: Form | undefined,
  ): Promise<FastifyReply> {
    const form = body ?? {};
    const open = await this.members.findOpen(secret);
    if (!open) return sendPage(reply, 404, invitationGonePage());
    const again = (status: number, error: string) =>
      this.sendInvitation(request, reply, status, open, secret, { error, name: text(form.name) });
    const tooManyAttempts = (retryAfterSeconds: number) => {
      void reply.header('retry-after', retryAfterSeconds);
      const minutes = Math.ceil(retryAfterSeconds / 60);
      return again(
        429,
        `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      );
    };
    if (open.accountExists) {
      const wait = await this.throttle.admit(request.ip, open.email);
      if (wait > 0) return tooManyAttempts(wait);
    }
    // The one form asks for the password twice, whether or not the account exists.
    if (text(form.password) !== text(form.passwordRepeat))
      return again(400, 'The two passwords differ.');
    let accepted: Awaited<ReturnType<MembersService['accept']>>;
    try {
      accepted = await this.members.accept(secret, { name: form.name, password: form.password });
    } catch (error) {
      if (error instanceof LoyaltyException && error.code === ErrorCode.INVITATION_NOT_FOUND)
        return sendPage(reply, 404, invitationGonePage());
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      if (open.accountExists && error instanceof AdminInputError) {
        await this.throttle.failed();
        await this.audit.record(await failedSignIn(this.admins, open.email, request.ip));
        return again(401, refusal.message);
      }
      return again(refusal.status, refusal.message);
    }
    if (open.accountExists) await this.throttle.succeeded(request.ip, open.email);
    await this.audit.record({
      actor: { id: accepted.accountId, email: open.email },
      action: 'sign-in',
      address: request.ip,
    });
    await this.audit.record({
      actor: { id: accepted.accountId, email: open.email },
      action: 'member.join',
      spaceId: open.spaceId,
      target: open.email,
      detail: { role: open.role, newAccount: accepted.created },
      address: request.ip,
    });
    // Whoever was signed in in this browser is signed out: the invitee is now.
    await this.sessions.end(readCookie(request, SESSION_COOKIE));
    const { cookie } = await this.sessions.start(accepted.accountId);
    void reply.header('set-cookie', [
      cookieHeader(request, SESSION_COOKIE, cookie, SESSION_TTL_MS / 1000),
      cookieHeader(request, SIGN_IN_CSRF_COOKIE, '', 0),
    ]);
    setNotice(request, reply, 'invitation.accepted');
    return reply.redirect(`/dashboard/spaces/${open.spaceId}`, 303);
  }

  @Get('account')
  async account(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SafeHtml> {
    return accountPage(session, {
      spaces: await this.ownSpaces(session),
      notice: takeNotice(request, reply),
    });
  }

  @Post('account/password')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async changePassword(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const form = body ?? {};
    const refuse = async (status: number, error: string) =>
      new DashboardPageException(
        status,
        accountPage(session, { spaces: await this.ownSpaces(session), error }),
      );
    if (text(form.newPassword) !== text(form.repeatPassword))
      throw await refuse(400, 'The new passwords differ.');
    try {
      await this.actions.changeOwnPassword(
        session,
        { currentPassword: form.currentPassword, newPassword: form.newPassword },
        request.ip,
      );
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw await refuse(refusal.status, refusal.message);
    }
    setNotice(request, reply, 'password.changed');
    return seeOther('/dashboard/account');
  }

  @Get('accounts')
  async accounts(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SafeHtml> {
    this.operatorOnly(session);
    return accountsPage(session, {
      accounts: await this.admins.list(),
      notice: takeNotice(request, reply),
    });
  }

  @Post('accounts/:id/disable')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  disable(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<SeeOther> {
    return this.changeAccount(session, request, reply, id, 'disable');
  }

  @Post('accounts/:id/enable')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  enable(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<SeeOther> {
    return this.changeAccount(session, request, reply, id, 'enable');
  }

  @Get('accounts/:id/remove')
  async confirmRemoveAccount(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    this.operatorOnly(session);
    const account = (await this.admins.list()).find((one) => one.id === id);
    if (!account) {
      throw new DashboardPageException(
        404,
        accountsPage(session, { accounts: await this.admins.list(), error: 'Account not found.' }),
      );
    }
    const tokensCreated = (await this.tokens.list()).filter(
      (token) => token.createdBy === account.id,
    ).length;
    return removeAccountPage(session, account, tokensCreated);
  }

  @Post('accounts/:id/remove')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  removeAccount(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    return this.changeAccount(session, request, reply, id, 'remove', {
      keepTokens: keepTokensOf((body ?? {}).keepTokens),
    });
  }

  /**
   * The audit trail, newest first: the whole deployment's or one space's for an operator; for an
   * owner, one of their spaces' (the first one unless `spaceId` names another).
   */
  @Get('audit')
  async auditTrail(
    @CurrentSession() session: DashboardSession,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    const owned = session.access.spacesWith('space.manage');
    if (owned !== undefined && owned.length === 0) {
      throw new DashboardPageException(
        403,
        messagePage(session, {
          title: 'Audit trail',
          message: 'The audit trail is for operators and the owners of a space.',
        }),
      );
    }
    const chosen = param(query.spaceId);
    let spaceId: number | undefined;
    if (chosen !== undefined && chosen !== '')
      spaceId = (await this.views.pageSpace(session, chosen, 'space.manage')).id;
    else if (owned !== undefined) spaceId = owned[0];
    const before = param(query.before);
    if (before !== undefined && !AUDIT_ID.test(before)) {
      throw new DashboardPageException(
        400,
        messagePage(session, {
          title: 'Audit trail',
          active: 'audit',
          message: 'That page of the audit trail does not exist: start again from the newest.',
          back: { href: '/dashboard/audit', label: 'Newest entries' },
        }),
      );
    }
    const entries = await this.audit.list({ spaceId, before, limit: AUDIT_PAGE_SIZE });
    const spaces = (await this.spaces.listSpaces())
      .filter((space) => session.access.can('space.manage', space.id))
      .map((space) => ({ id: space.id, name: space.name }));
    return auditPage(session, {
      entries,
      spaceId,
      spaces,
      deployment: session.access.operator,
      next: entries.length === AUDIT_PAGE_SIZE ? entries[entries.length - 1].id : null,
      paged: before !== undefined,
    });
  }

  private async renderMembers(
    session: DashboardSession,
    space: SpaceEntity,
    more: Omit<MembersView, 'space' | 'members' | 'invitations'>,
  ): Promise<SafeHtml> {
    return membersPage(session, {
      ...more,
      space: { id: space.id, name: space.name },
      members: await this.members.list(space.id),
      invitations: await this.members.openInvitations(space.id),
    });
  }

  /** A role change or removal; a refusal (the last owner, no such member) shows the page again. */
  private async memberChange<T>(
    session: DashboardSession,
    space: SpaceEntity,
    change: () => Promise<T>,
  ): Promise<T> {
    try {
      return await change();
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw new DashboardPageException(
        refusal.status,
        await this.renderMembers(session, space, { error: refusal.message }),
      );
    }
  }

  private async changeAccount(
    session: DashboardSession,
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    change: 'disable' | 'enable' | 'remove',
    options: { keepTokens?: boolean } = {},
  ): Promise<SeeOther> {
    this.operatorOnly(session);
    try {
      await this.actions.manage(session, id, change, request.ip, options);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      throw new DashboardPageException(
        refusal.status,
        accountsPage(session, { accounts: await this.admins.list(), error: refusal.message }),
      );
    }
    setNotice(request, reply, ACCOUNT_NOTICES[change]);
    return seeOther('/dashboard/accounts');
  }

  private operatorOnly(session: DashboardSession): void {
    try {
      requireOperator(session);
    } catch {
      throw new DashboardPageException(
        403,
        messagePage(session, {
          title: 'Accounts',
          message: 'Only operators manage the accounts of the deployment.',
        }),
      );
    }
  }

  /** The account's spaces with its role in each, by name. */
  private async ownSpaces(session: DashboardSession) {
    return (await this.spaces.listSpaces())
      .filter((space) => session.access.roles.has(space.id))
      .map((space) => ({
        id: space.id,
        name: space.name,
        role: session.access.roles.get(space.id)!,
      }));
  }

  private sendInvitation(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    open: OpenInvitation,
    secret: string,
    more: Pick<InvitationView, 'signedInAs' | 'error' | 'name'>,
  ): Promise<FastifyReply> {
    return this.spaces.findSpace(open.spaceId).then((space) =>
      sendPage(
        reply,
        status,
        invitationPage({
          ...more,
          secret,
          csrfToken: issueSignInFormToken(request, reply),
          spaceName: space?.name ?? `Space #${open.spaceId}`,
          email: open.email,
          role: open.role,
        }),
      ),
    );
  }
}
