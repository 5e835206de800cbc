import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  AccessTokenInfo,
  AccessTokensService,
  CreatedAccessToken,
} from '../../auth/access-tokens.service';
import { parseRotationGrace, parseTokenExpiry } from '../../auth/token-expiry';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes } from '../../auth/token-scopes';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { SpacesService } from '../../spaces/spaces.service';
import { AuditService, auditActor } from './audit/audit.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import type { DashboardSession } from './accounts/sessions.service';
import { SettingsApiFilter } from './settings-api.filter';
import { spaceFor } from './accounts/space-access';
import { tokenTarget, visibleTokens } from './accounts/token-access';

/**
 * The settings endpoint behind the Server API section (docs/api.md, Access tokens), for a signed-in
 * account's browser or script: the session cookie, and `x-csrf-token` on POST and DELETE. An
 * operator manages every token and creates deployment tokens; a space's owner manages that
 * space's tokens. Refusals are answered in the error envelope by the SettingsApiFilter.
 */
@Controller('settings/server-api/tokens')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(SettingsApiFilter)
export class SettingsApiController {
  constructor(
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @CsrfProtected({ from: 'header' })
  @UseInterceptors(NoStoreInterceptor)
  async create(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Body() body: unknown,
  ) {
    const fields = (body ?? {}) as {
      name?: unknown;
      scopes?: unknown;
      spaceId?: unknown;
      expires?: unknown;
    };
    if (typeof fields.name !== 'string')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'name is required');
    const scopes =
      fields.scopes === undefined ? DEFAULT_TOKEN_SCOPES : parseTokenScopes(fields.scopes);
    const spaceId = await this.ownerSpace(session, fields.spaceId);
    const expiresAt = fields.expires === undefined ? null : parseTokenExpiry(fields.expires);
    const created = await this.tokens.create(fields.name, scopes, { spaceId, expiresAt });
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.create',
      spaceId,
      target: tokenTarget(created),
      detail: { scopes: created.scopes, expiresAt: created.expiresAt },
      address: request.ip,
    });
    return createdAnswer(created);
  }

  @Get()
  @UseInterceptors(NoStoreInterceptor)
  async list(
    @CurrentSession() session: DashboardSession,
    @Query('spaceId') spaceId?: string,
  ): Promise<AccessTokenInfo[]> {
    if (spaceId === undefined) return visibleTokens(this.tokens, session);
    const id = await spaceFor(session, this.spaces, spaceId, 'space.manage');
    return this.tokens.list({ spaceIds: [id] });
  }

  /** A new secret under the same name and scopes; the old one lasts `graceSeconds` (default 0). */
  @Post(':id/rotate')
  @CsrfProtected({ from: 'header' })
  @UseInterceptors(NoStoreInterceptor)
  async rotate(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
  ) {
    const grace = (body ?? {}) as { graceSeconds?: unknown };
    const graceMs = parseRotationGrace(grace.graceSeconds ?? 0);
    const token = await this.manageable(session, id);
    const rotated = await this.tokens.rotate(token.id, graceMs);
    if (!rotated) throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.rotate',
      spaceId: token.spaceId,
      target: tokenTarget(rotated.token),
      detail: { previous: rotated.previous.prefix, graceSeconds: graceMs / 1000 },
      address: request.ip,
    });
    return {
      ...createdAnswer(rotated.token),
      previous: { id: rotated.previous.id, expiresAt: rotated.previous.expiresAt },
    };
  }

  @Delete(':id')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async revoke(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
  ): Promise<void> {
    const token = await this.manageable(session, id);
    if (!(await this.tokens.revoke(token.id)))
      throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    await this.audit.record({
      actor: auditActor(session),
      action: 'token.revoke',
      spaceId: token.spaceId,
      target: tokenTarget(token),
      address: request.ip,
    });
  }

  /**
   * The space a new token belongs to: the one named, which the account must own (or operate);
   * none names a deployment token, which only an operator makes.
   */
  private async ownerSpace(session: DashboardSession, spaceId: unknown): Promise<number | null> {
    if (spaceId === undefined || spaceId === null) {
      if (session.access.operator) return null;
      const owned = session.access.spacesWith('space.manage') ?? [];
      throw new LoyaltyException(
        owned.length > 0 ? ErrorCode.INVALID_ARGUMENT : ErrorCode.PERMISSION_DENIED,
        owned.length > 0
          ? `spaceId is required: you may create tokens for space ${owned.join(', ')}`
          : undefined,
      );
    }
    return spaceFor(session, this.spaces, spaceId, 'space.manage');
  }

  /** A live token the account may manage; TOKEN_NOT_FOUND for any other, existing or not. */
  private async manageable(session: DashboardSession, id: string): Promise<AccessTokenInfo> {
    const token = await this.tokens.find(id);
    const allowed =
      token !== null &&
      (token.spaceId === null
        ? session.access.operator
        : session.access.can('space.manage', token.spaceId));
    if (!allowed) throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
    return token;
  }
}

function createdAnswer(created: CreatedAccessToken) {
  return {
    id: created.id,
    name: created.name,
    token: created.token,
    prefix: created.prefix,
    scopes: created.scopes,
    spaceId: created.spaceId,
    createdAt: created.createdAt,
    expiresAt: created.expiresAt,
  };
}
