import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { SpacesService } from '../../spaces/spaces.service';
import { MembersService } from './accounts/members.service';
import type { DashboardSession } from './accounts/sessions.service';
import { spaceFor } from './accounts/space-access';
import { CsrfProtected } from './csrf-protected.decorator';
import { keepTokensOf } from './form-fields';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import { SettingsApiFilter } from './settings-api.filter';
import { TeamActions } from './team-actions.service';

type Fields = Record<string, unknown>;
const fieldsOf = (body: unknown): Fields =>
  body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Fields) : {};

/** The absolute link of an invitation path, on the address the owner reached us at. */
export function invitationLink(request: FastifyRequest, path: string): string {
  return `${request.protocol}://${request.headers.host ?? 'localhost'}${path}`;
}

/**
 * A space's team, privacy and points, for its owners (members, invitations, privacy) and editors
 * (points); an operator may do all of it in every space. JSON, with `x-csrf-token` on changes.
 */
@Controller('settings/spaces/:spaceId')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(SettingsApiFilter)
@UseInterceptors(NoStoreInterceptor)
export class TeamsApiController {
  constructor(
    private readonly spaces: SpacesService,
    private readonly members: MembersService,
    private readonly actions: TeamActions,
  ) {}

  @Get('members')
  async listMembers(@CurrentSession() session: DashboardSession, @Param('spaceId') id: string) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    return {
      members: await this.members.list(spaceId),
      invitations: await this.members.openInvitations(spaceId),
    };
  }

  @Post('invitations')
  @CsrfProtected({ from: 'header' })
  async invite(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Body() body: unknown,
  ) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    const { path, ...invitation } = await this.actions.invite(
      session,
      spaceId,
      fieldsOf(body),
      request.ip,
    );
    return { ...invitation, link: invitationLink(request, path) };
  }

  @Delete('invitations/:invitationId')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async withdraw(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Param('invitationId') invitationId: string,
  ): Promise<void> {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    await this.actions.withdraw(session, spaceId, invitationId, request.ip);
  }

  @Patch('members/:accountId')
  @CsrfProtected({ from: 'header' })
  async setRole(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Param('accountId') accountId: string,
    @Body() body: unknown,
  ) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    const role = await this.actions.setRole(
      session,
      spaceId,
      accountId,
      fieldsOf(body).role,
      request.ip,
    );
    return { accountId, role };
  }

  @Delete('members/:accountId')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async removeMember(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Param('accountId') accountId: string,
    @Query('keepTokens') keepTokens?: string,
  ): Promise<void> {
    const keep = keepTokensOf(keepTokens);
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    await this.actions.removeMember(session, spaceId, accountId, request.ip, { keepTokens: keep });
  }

  /** `{ "private": true }`: only the space's own tokens and deployment tokens read it. */
  @Put('privacy')
  @CsrfProtected({ from: 'header' })
  async setPrivacy(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Body() body: unknown,
  ) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    const isPrivate = fieldsOf(body).private;
    if (typeof isPrivate !== 'boolean')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'private must be true or false');
    await this.actions.setPrivacy(session, spaceId, isPrivate, request.ip);
    return { spaceId, private: isPrivate };
  }

  /** `{ address, points, reason }`: grants (or, negative, deducts) points for one address. */
  @Post('points')
  @CsrfProtected({ from: 'header' })
  async adjustPoints(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Body() body: unknown,
  ) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.edit');
    return this.actions.adjustPoints(session, spaceId, fieldsOf(body), request.ip);
  }
}
