import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { addressKeyOf } from '../../common/address-key';
import { IngestService } from '../../ingest/ingest.service';
import { PointsLedgerService } from '../../leaderboards/ledger/points-ledger.service';
import { parseRecord, PointsRecord } from '../../records/ingest-record';
import { SpacesService } from '../../spaces/spaces.service';
import {
  CreatedInvitation,
  InvitationInfo,
  MembersService,
  parseRole,
} from './accounts/members.service';
import { tokensDetail } from './accounts/token-access';
import type { SpaceRole } from './accounts/roles';
import type { DashboardSession } from './accounts/sessions.service';
import { auditActor, AuditService } from './audit/audit.service';
import { FormKey, parseReason } from './forms/points-form';

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
    private readonly ledger: PointsLedgerService,
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

  /**
   * Removes a member; the space's tokens they created or rotated are revoked with it unless
   * `keepTokens`, and the audit entry names them (or says they were kept).
   */
  async removeMember(
    session: DashboardSession,
    spaceId: number,
    accountId: string,
    address: string,
    { keepTokens = false }: { keepTokens?: boolean } = {},
  ): Promise<void> {
    const removed = await this.members.remove(spaceId, accountId, { keepTokens });
    await this.audit.record({
      actor: auditActor(session),
      action: 'member.remove',
      spaceId,
      target: removed.email,
      detail: { role: removed.role, ...tokensDetail(removed.revokedTokens, keepTokens) },
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
   * record applied as ingestion applies it, its reason kept in the ledger, and an audit entry.
   * `once` is the record's key and time when the caller has one (the page's form, which a resend
   * must not apply twice): the same record again changes nothing and answers `applied: false`.
   * Without it, a fresh key and now.
   */
  async adjustPoints(
    session: DashboardSession,
    spaceId: number,
    fields: { address?: unknown; points?: unknown; reason?: unknown },
    clientAddress: string,
    once?: FormKey,
  ): Promise<{ key: string; address: string; points: number; applied: boolean }> {
    const reason = parseReason(fields.reason, 'Reason');
    const points =
      typeof fields.points === 'string' && /^-?\d{1,15}$/.test(fields.points.trim())
        ? Number(fields.points.trim())
        : fields.points;
    if (points === 0)
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'points must not be 0');
    const key = once?.key ?? `dashboard:${randomUUID()}`;
    // The points count from when they are sent, not from when the form was opened.
    const parsed = parseRecord({
      type: 'points',
      key,
      spaceId,
      address: typeof fields.address === 'string' ? fields.address.trim() : fields.address,
      points,
      occurredAt: new Date().toISOString(),
      reason,
    });
    if (!parsed.ok) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, parsed.reason);
    const record = parsed.record as PointsRecord;
    // A form sent again (a double click, a resend after a lost answer) is applied once: its key
    // is in the ledger already. Looked up first, and again after a key refusal, for a resend that
    // raced the first sending.
    let applied = false;
    if (!(await this.sentBefore(record))) {
      const [outcome] = await this.ingest.applyRecords([record], { spaceId });
      const resent = outcome.status === 'refused' && outcome.field === 'key';
      if (outcome.status === 'refused' && !(resent && (await this.sentBefore(record))))
        throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, outcome.reason);
      applied = outcome.status === 'accepted';
    }
    if (applied)
      await this.audit.record({
        actor: auditActor(session),
        action: 'points.adjust',
        spaceId,
        target: record.address,
        detail: { points: record.points, reason, key },
        address: clientAddress,
      });
    return { key, address: record.address, points: record.points, applied };
  }

  /**
   * Whether the ledger holds this record's key already: as the same points (true), or as others
   * (refused: the form was sent before with other values, which were kept).
   */
  private async sentBefore(record: PointsRecord): Promise<boolean> {
    const prior = await this.ledger.eventByKey(record.key);
    if (!prior) return false;
    const same =
      prior.spaceId === record.spaceId &&
      prior.addressKey === addressKeyOf(record.address) &&
      prior.points === record.points &&
      prior.reason === (record.reason ?? null);
    if (same) return true;
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'This form was already sent with other values, which were kept: nothing changed this time. Check the values and send it again',
    );
  }
}
