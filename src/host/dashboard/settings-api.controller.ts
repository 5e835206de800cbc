import { Body, Controller, Delete, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes } from '../../auth/token-scopes';
import { ErrorCode, ERROR_DEFINITIONS } from '../../common/errors/error-code';
import { envelopeFor } from '../../common/errors/error-envelope';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { DashboardAuth } from './dashboard-auth.service';
import type { DashboardSession } from './sessions.service';

/**
 * The settings endpoint behind the Server API section (PRODUCT.md section 2), for a signed-in
 * admin's browser or script: the session cookie, and `x-csrf-token` on POST and DELETE.
 */
@Controller('settings/server-api/tokens')
export class SettingsApiController {
  constructor(
    private readonly auth: DashboardAuth,
    private readonly tokens: AccessTokensService,
  ) {}

  @Post()
  async create(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: unknown,
  ): Promise<unknown> {
    if (!(await this.authorize(request, reply, true))) return;
    const fields = (body ?? {}) as { name?: unknown; scopes?: unknown };
    if (typeof fields.name !== 'string')
      return this.fail(request, reply, ErrorCode.INVALID_ARGUMENT, 'name is required');
    try {
      const scopes =
        fields.scopes === undefined ? DEFAULT_TOKEN_SCOPES : parseTokenScopes(fields.scopes);
      const created = await this.tokens.create(fields.name, scopes);
      return reply.code(201).header('cache-control', 'no-store').send({
        id: created.id,
        name: created.name,
        token: created.token,
        prefix: created.prefix,
        scopes: created.scopes,
        createdAt: created.createdAt,
      });
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      return this.fail(request, reply, error.code, error.message);
    }
  }

  @Get()
  async list(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<unknown> {
    if (!(await this.authorize(request, reply, false))) return;
    return reply.header('cache-control', 'no-store').send(await this.tokens.list());
  }

  @Delete(':id')
  async revoke(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<unknown> {
    if (!(await this.authorize(request, reply, true))) return;
    if (!(await this.tokens.revoke(id)))
      return this.fail(request, reply, ErrorCode.TOKEN_NOT_FOUND);
    return reply.code(204).send();
  }

  private async authorize(
    request: FastifyRequest,
    reply: FastifyReply,
    changesState: boolean,
  ): Promise<DashboardSession | null> {
    const session = await this.auth.sessionOf(request);
    if (!session) {
      await this.fail(request, reply, ErrorCode.SIGN_IN_REQUIRED);
      return null;
    }
    if (
      changesState &&
      !this.auth.csrfOk(request, session.csrfToken, request.headers['x-csrf-token'])
    ) {
      await this.fail(request, reply, ErrorCode.CSRF_CHECK_FAILED);
      return null;
    }
    return session;
  }

  private fail(
    request: FastifyRequest,
    reply: FastifyReply,
    code: ErrorCode,
    message?: string,
  ): FastifyReply {
    const status = code === ErrorCode.INVALID_ARGUMENT ? 400 : ERROR_DEFINITIONS[code].httpStatus;
    const envelope = envelopeFor(code, message, request.id);
    return reply.code(status).send({
      errors: [{ ...envelope, extensions: { ...envelope.extensions, http_status: status } }],
    });
  }
}
