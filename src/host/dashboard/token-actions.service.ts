import { Injectable } from '@nestjs/common';
import {
  AccessTokenInfo,
  AccessTokensService,
  CreatedAccessToken,
} from '../../auth/access-tokens.service';
import type { TokenScope } from '../../auth/token-scopes';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { SpacesService } from '../../spaces/spaces.service';
import type { DashboardSession } from './accounts/sessions.service';
import { spaceFor } from './accounts/space-access';
import { tokenTarget } from './accounts/token-access';
import { auditActor, AuditService } from './audit/audit.service';

/**
 * Token management as an account may do it, for the settings endpoint and the Server API page
 * alike: an operator manages every token and makes deployment tokens; a space's owner manages
 * that space's tokens. Every change is audited. A token the account may not manage is
 * TOKEN_NOT_FOUND, as one that does not exist.
 */
@Injectable()
export class TokenActions {
  constructor(
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly audit: AuditService,
  ) {}

  /**
   * The space a new token belongs to: the one named (`spaceId`), which the account must own or
   * operate; none (absent, null, '' or 'deployment') is a deployment token, an operator's alone.
   */
  async ownerSpace(session: DashboardSession, spaceId: unknown): Promise<number | null> {
    if (spaceId === undefined || spaceId === null || spaceId === '' || spaceId === 'deployment') {
      if (session.access.operator) return null;
      const owned = session.access.spacesWith('space.manage') ?? [];
      if (owned.length === 0) throw new LoyaltyException(ErrorCode.PERMISSION_DENIED);
      throw new LoyaltyException(
        ErrorCode.PERMISSION_DENIED,
        `Only operators make deployment tokens: choose one of your spaces (spaceId ${owned.join(', ')})`,
      );
    }
    return spaceFor(session, this.spaces, spaceId, 'space.manage');
  }

  async manageable(session: DashboardSession, id: string): Promise<AccessTokenInfo> {
    const token = await this.tokens.find(id);
    const allowed =
      token !== null &&
      (token.spaceId === null
        ? session.access.operator
        : session.access.can('space.manage', token.spaceId));
    if (!allowed) throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    return token;
  }

  async create(
    session: DashboardSession,
    input: {
      name: string;
      scopes: readonly TokenScope[];
      spaceId: unknown;
      expiresAt: number | null;
    },
    address: string,
  ): Promise<CreatedAccessToken> {
    const spaceId = await this.ownerSpace(session, input.spaceId);
    // A name a live token of the same owner has is refused, on the page and the endpoint alike.
    const created = await this.tokens.create(input.name, input.scopes, {
      spaceId,
      expiresAt: input.expiresAt,
      uniqueName: true,
      createdBy: session.adminId,
    });
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.create',
      spaceId,
      target: tokenTarget(created),
      detail: { scopes: created.scopes, expiresAt: created.expiresAt },
      address,
    });
    return created;
  }

  /** A new secret under the same name and scopes; the old one lasts `graceMs` more. */
  async rotate(
    session: DashboardSession,
    id: string,
    graceMs: number,
    address: string,
  ): Promise<{ token: CreatedAccessToken; previous: AccessTokenInfo }> {
    const token = await this.manageable(session, id);
    // The new secret is the rotator's: removing them revokes it, as it would one they created.
    const rotated = await this.tokens.rotate(token.id, graceMs, { createdBy: session.adminId });
    if (!rotated) throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.rotate',
      spaceId: token.spaceId,
      target: tokenTarget(rotated.token),
      detail: { previous: rotated.previous.prefix, graceSeconds: graceMs / 1000 },
      address,
    });
    return rotated;
  }

  async revoke(session: DashboardSession, id: string, address: string): Promise<void> {
    const token = await this.manageable(session, id);
    if (!(await this.tokens.revoke(token.id)))
      throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.revoke',
      spaceId: token.spaceId,
      target: tokenTarget(token),
      address,
    });
  }
}
