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
  Req,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { parseDisplayName } from '../../common/text/display-name';
import { IngestService } from '../../ingest/ingest.service';
import { parseRecord } from '../../records/ingest-record';
import { SpacesService } from '../../spaces/spaces.service';
import { AuditService, auditActor } from './audit/audit.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import type { DashboardSession } from './accounts/sessions.service';
import { SettingsApiFilter } from './settings-api.filter';
import { MembersService, parseRole } from './accounts/members.service';
import { spaceFor } from './accounts/space-access';

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
    private readonly audit: AuditService,
    private readonly ingest: IngestService,
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
    const fields = (body ?? {}) as { email?: unknown; role?: unknown };
    const invitation = await this.members.invite(
      spaceId,
      fields.email,
      fields.role,
      session.adminId,
    );
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.invite',
      spaceId,
      target: invitation.email,
      detail: { role: invitation.role, expiresAt: invitation.expiresAt },
      address: request.ip,
    });
    const { path, ...info } = invitation;
    return { ...info, link: invitationLink(request, path) };
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
    const withdrawn = await this.members.withdraw(spaceId, invitationId);
    if (!withdrawn) throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'invitation.withdraw',
      spaceId,
      target: withdrawn.email,
      detail: { role: withdrawn.role },
      address: request.ip,
    });
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
    const role = parseRole(((body ?? {}) as { role?: unknown }).role);
    const changed = await this.members.setRole(spaceId, accountId, role);
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.role',
      spaceId,
      target: changed.email,
      detail: { from: changed.from, to: role },
      address: request.ip,
    });
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
  ): Promise<void> {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.manage');
    const removed = await this.members.remove(spaceId, accountId);
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.remove',
      spaceId,
      target: removed.email,
      detail: { role: removed.role },
      address: request.ip,
    });
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
    const isPrivate = ((body ?? {}) as { private?: unknown }).private;
    if (typeof isPrivate !== 'boolean')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'private must be true or false');
    if (!(await this.spaces.setPrivate(spaceId, isPrivate)))
      throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'space.privacy',
      spaceId,
      detail: { private: isPrivate },
      address: request.ip,
    });
    return { spaceId, private: isPrivate };
  }

  /**
   * Grants (positive) or deducts (negative) points for one address, with a reason: a points record
   * with a fresh key, applied as ingestion applies it, and an audit entry.
   */
  @Post('points')
  @CsrfProtected({ from: 'header' })
  async adjustPoints(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('spaceId') id: string,
    @Body() body: unknown,
  ) {
    const spaceId = await spaceFor(session, this.spaces, id, 'space.edit');
    const fields = (body ?? {}) as { address?: unknown; points?: unknown; reason?: unknown };
    return adjustPoints(this.ingest, this.audit, {
      session,
      spaceId,
      address: fields.address,
      points: fields.points,
      reason: fields.reason,
      clientAddress: request.ip,
    });
  }
}

/** The dashboard's points adjustment, shared by the endpoint and the space page's form. */
export async function adjustPoints(
  ingest: IngestService,
  audit: AuditService,
  input: {
    session: DashboardSession;
    spaceId: number;
    address: unknown;
    points: unknown;
    reason: unknown;
    clientAddress: string;
  },
): Promise<{ key: string; address: string; points: number }> {
  const reason = parseDisplayName(input.reason, 'Reason');
  const points =
    typeof input.points === 'string' && /^-?\d{1,15}$/.test(input.points.trim())
      ? Number(input.points.trim())
      : input.points;
  if (points === 0) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'points must not be 0');
  const key = `dashboard:${randomUUID()}`;
  const parsed = parseRecord({
    type: 'points',
    key,
    spaceId: input.spaceId,
    address: typeof input.address === 'string' ? input.address.trim() : input.address,
    points,
    occurredAt: new Date().toISOString(),
  });
  if (!parsed.ok) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, parsed.reason);
  const [outcome] = await ingest.applyRecords([parsed.record]);
  if (outcome.status === 'refused')
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, outcome.reason);
  const record = parsed.record as { address: string; points: number };
  await audit.record({
    actor: auditActor(input.session),
    action: 'points.adjust',
    spaceId: input.spaceId,
    target: record.address,
    detail: { points: record.points, reason, key },
    address: input.clientAddress,
  });
  return { key, address: record.address, points: record.points };
}
