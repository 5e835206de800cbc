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
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { SpacesService } from '../../spaces/spaces.service';
import { AdminsService, AccountInfo } from './accounts/admins.service';
import { AccountActions } from './account-actions.service';
import { AUDIT_CSV_HEADER, AUDIT_ID, auditCsvLine, AuditService } from './audit/audit.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { keepTokensOf } from './form-fields';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { NoStoreInterceptor } from './no-store.interceptor';
import type { DashboardSession } from './accounts/sessions.service';
import { SettingsApiFilter } from './settings-api.filter';
import { requireOperator, spaceFor } from './accounts/space-access';

const AUDIT_FORMATS = ['json', 'csv', 'ndjson'] as const;
const isAuditFormat = (value: unknown): value is (typeof AUDIT_FORMATS)[number] =>
  (AUDIT_FORMATS as readonly unknown[]).includes(value);

/**
 * Accounts and the audit trail, as JSON: one's own password for everyone; the list of accounts,
 * disabling and removing them for operators; the audit trail of the deployment for operators and
 * of a space for its owners.
 */
@Controller('settings')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(SettingsApiFilter)
@UseInterceptors(NoStoreInterceptor)
export class AccountsApiController {
  constructor(
    private readonly admins: AdminsService,
    private readonly audit: AuditService,
    private readonly spaces: SpacesService,
    private readonly actions: AccountActions,
  ) {}

  /** The current password is required; every other session of the account ends. */
  @Post('account/password')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async changePassword(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Body() body: unknown,
  ): Promise<void> {
    const fields = (body ?? {}) as { currentPassword?: unknown; newPassword?: unknown };
    await this.actions.changeOwnPassword(session, fields, request.ip);
  }

  @Get('accounts')
  async listAccounts(@CurrentSession() session: DashboardSession): Promise<AccountInfo[]> {
    requireOperator(session);
    return this.admins.list();
  }

  @Post('accounts/:id/disable')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async disable(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
  ): Promise<void> {
    await this.actions.manage(session, id, 'disable', request.ip);
  }

  @Post('accounts/:id/enable')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async enable(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
  ): Promise<void> {
    await this.actions.manage(session, id, 'enable', request.ip);
  }

  @Delete('accounts/:id')
  @CsrfProtected({ from: 'header' })
  @HttpCode(204)
  async remove(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Query('keepTokens') keepTokens?: string,
  ): Promise<void> {
    await this.actions.manage(session, id, 'remove', request.ip, {
      keepTokens: keepTokensOf(keepTokens),
    });
  }

  /**
   * The audit trail, newest first: a space's (`spaceId`, for its owners) or the deployment's
   * (operators). `format=json` (default) answers one page (`limit`, `before`: the last id seen);
   * `csv` and `ndjson` stream every entry as a download.
   */
  @Get('audit')
  async auditTrail(
    @CurrentSession() session: DashboardSession,
    @Res() reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ): Promise<FastifyReply> {
    const format = query.format ?? 'json';
    if (!isAuditFormat(format))
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `format must be one of ${AUDIT_FORMATS.join(', ')}`,
      );
    let spaceId: number | undefined;
    if (query.spaceId !== undefined) {
      spaceId = await spaceFor(session, this.spaces, query.spaceId, 'space.manage');
    } else requireOperator(session);
    if (format === 'json') {
      const limit = query.limit === undefined ? 100 : Number(query.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500)
        throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'limit must be 1 to 500');
      const before = query.before;
      if (before !== undefined && (typeof before !== 'string' || !AUDIT_ID.test(before)))
        throw new LoyaltyException(
          ErrorCode.INVALID_ARGUMENT,
          'before must be the id of an audit entry (the next of a previous page)',
        );
      const entries = await this.audit.list({ spaceId, before, limit });
      return reply.header('cache-control', 'no-store').send({
        entries,
        next: entries.length === limit ? entries[entries.length - 1].id : null,
      });
    }
    const name = `audit-${spaceId === undefined ? 'deployment' : `space-${spaceId}`}.${format}`;
    const entries = this.audit.all({ spaceId });
    const lines = async function* () {
      if (format === 'csv') yield `${AUDIT_CSV_HEADER}\n`;
      for await (const entry of entries)
        yield format === 'csv' ? `${auditCsvLine(entry)}\n` : `${JSON.stringify(entry)}\n`;
    };
    return reply
      .header('cache-control', 'no-store')
      .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${name}"`)
      .send(Readable.from(lines()));
  }
}
