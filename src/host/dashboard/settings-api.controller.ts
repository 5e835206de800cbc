import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { AccessTokenInfo, AccessTokensService } from '../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes } from '../../auth/token-scopes';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import { SettingsApiFilter } from './settings-api.filter';

/**
 * The settings endpoint behind the Server API section (docs/api.md, Access tokens), for a signed-in
 * admin's browser or script: the session cookie, and `x-csrf-token` on POST and DELETE. Its
 * refusals are thrown and answered in the error envelope by the SettingsApiFilter.
 */
@Controller('settings/server-api/tokens')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(SettingsApiFilter)
export class SettingsApiController {
  constructor(private readonly tokens: AccessTokensService) {}

  @Post()
  @CsrfProtected({ from: 'header' })
  @UseInterceptors(NoStoreInterceptor)
  async create(@Body() body: unknown) {
    const fields = (body ?? {}) as { name?: unknown; scopes?: unknown };
    if (typeof fields.name !== 'string')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'name is required');
    const scopes =
      fields.scopes === undefined ? DEFAULT_TOKEN_SCOPES : parseTokenScopes(fields.scopes);
    const created = await this.tokens.create(fields.name, scopes);
    return {
      id: created.id,
      name: created.name,
      token: created.token,
      prefix: created.prefix,
      scopes: created.scopes,
      createdAt: created.createdAt,
    };
  }

  @Get()
  @UseInterceptors(NoStoreInterceptor)
  list(): Promise<AccessTokenInfo[]> {
    return this.tokens.list();
  }

  @Delete(':id')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async revoke(@Param('id') id: string): Promise<void> {
    if (!(await this.tokens.revoke(id))) throw new LoyaltyException(ErrorCode.TOKEN_NOT_FOUND);
  }
}
