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
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import type { DashboardSession } from './accounts/sessions.service';
import { SettingsApiFilter } from './settings-api.filter';
import { spaceFor } from './accounts/space-access';
import { visibleTokens } from './accounts/token-access';
import { TokenActions } from './token-actions.service';

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
    private readonly actions: TokenActions,
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
    const expiresAt = fields.expires === undefined ? null : parseTokenExpiry(fields.expires);
    const created = await this.actions.create(
      session,
      { name: fields.name, scopes, spaceId: fields.spaceId, expiresAt },
      request.ip,
    );
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
    const rotated = await this.actions.rotate(session, id, graceMs, request.ip);
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
    await this.actions.revoke(session, id, request.ip);
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
