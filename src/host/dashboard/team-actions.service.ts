import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { parseDisplayName } from '../../common/text/display-name';
import { IngestService } from '../../ingest/ingest.service';
import { parseRecord } from '../../records/ingest-record';
import { SpacesService } from '../../spaces/spaces.service';
import {
  CreatedInvitation,
  InvitationInfo,
  MembersService,
  parseRole,
} from './accounts/members.service';
import type { SpaceRole } from './accounts/roles';
import type { DashboardSession } from './accounts/sessions.service';
import { auditActor, AuditService } from './audit/audit.service';

/**
 * What a space's owners (its team and privacy) and editors (its points) do, for the settings
 * endpoint and the pages alike, each change audited. The caller has checked the account's access
 * to the space (spaceFor).
 */
@Injectable()
export class TeamActions {
  constructor(
    private readonly members: MembersService,
    private readonly spaces: SpacesService,
    private readonly ingest: IngestService,
    private readonly audit: AuditService,
  ) {}

  async invite(
    session: DashboardSession,
    spaceId: number,
    fields: { email?: unknown; role?: unknown },
    address: string,
  ): Promise<CreatedInvitation> {
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
      address,
    });
    return invitation;
  }

  /** INVITATION_NOT_FOUND when there is no open invitation of that id in the space. */
  async withdraw(
    session: DashboardSession,
    spaceId: number,
    invitationId: string,
    address: string,
  ): Promise<InvitationInfo> {
    const withdrawn = await this.members.withdraw(spaceId, invitationId);
    if (!withdrawn) throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'invitation.withdraw',
      spaceId,
      target: withdrawn.email,
      detail: { role: withdrawn.role },
      address,
    });
    return withdrawn;
  }

  async setRole(
    session: DashboardSession,
    spaceId: number,
    accountId: string,
    roleInput: unknown,
    address: string,
  ): Promise<SpaceRole> {
    const role = parseRole(roleInput);
    const changed = await this.members.setRole(spaceId, accountId, role);
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.role',
      spaceId,
      target: changed.email,
      detail: { from: changed.from, to: role },
      address,
    });
    return role;
  }

  async removeMember(
    session: DashboardSession,
    spaceId: number,
    accountId: string,
    address: string,
  ): Promise<void> {
    const removed = await this.members.remove(spaceId, accountId);
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.remove',
      spaceId,
      target: removed.email,
      detail: { role: removed.role },
      address,
    });
  }

  /** Private: only the space's own tokens and deployment tokens read it. */
  async setPrivacy(
    session: DashboardSession,
    spaceId: number,
    isPrivate: boolean,
    address: string,
  ): Promise<void> {
    if (!(await this.spaces.setPrivate(spaceId, isPrivate)))
      throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'space.privacy',
      spaceId,
      detail: { private: isPrivate },
      address,
    });
  }

  /**
   * Grants (positive) or deducts (negative) points for one address, with a reason: a points
   * record with a fresh key, applied as ingestion applies it, and an audit entry.
   */
  async adjustPoints(
    session: DashboardSession,
    spaceId: number,
    fields: { address?: unknown; points?: unknown; reason?: unknown },
    clientAddress: string,
  ): Promise<{ key: string; address: string; points: number }> {
    const reason = parseDisplayName(fields.reason, 'Reason');
    const points =
      typeof fields.points === 'string' && /^-?\d{1,15}$/.test(fields.points.trim())
        ? Number(fields.points.trim())
        : fields.points;
    if (points === 0)
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'points must not be 0');
    const key = `dashboard:${randomUUID()}`;
    const parsed = parseRecord({
      type: 'points',
      key,
      spaceId,
      address: typeof fields.address === 'string' ? fields.address.trim() : fields.address,
      points,
      occurredAt: new Date().toISOString(),
    });
    if (!parsed.ok) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, parsed.reason);
    const [outcome] = await this.ingest.applyRecords([parsed.record]);
    if (outcome.status === 'refused')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, outcome.reason);
    const record = parsed.record as { address: string; points: number };
    await this.audit.record({
      actor: auditActor(session),
      action: 'points.adjust',
      spaceId,
      target: record.address,
      detail: { points: record.points, reason, key },
      address: clientAddress,
    });
    return { key, address: record.address, points: record.points };
  }
}
