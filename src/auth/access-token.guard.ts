import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { AccessTokensService, TokenBearingRequest } from './access-tokens.service';
import { rememberToken, requestOfExecution } from './current-token.decorator';
import { IS_PUBLIC } from './public.decorator';
import { REQUIRED_SCOPE } from './requires-scope.decorator';
import type { TokenScope } from './token-scopes';

/**
 * Requires a valid `access-token` header whose token has the `query` scope (or the one named by
 * `@RequiresScope`): 401 without a valid token, 403 INSUFFICIENT_SCOPE without the scope. Applied
 * to every resolver class of the module; the token is checked once per HTTP request however many
 * fields ask. A refusal is logged at debug level as a refused request (no stack): it is the
 * client's mistake, answered in the envelope, not the service's fault.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  private readonly logger = new Logger('AccessTokenGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: AccessTokensService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      return true;
    }
    const scope = this.reflector.getAllAndOverride<TokenScope>(REQUIRED_SCOPE, targets) ?? 'query';
    const request = requestOfExecution(context) as TokenBearingRequest | undefined;
    let token;
    try {
      token = await this.tokens.authorizeRequest(request ?? { headers: {} }, scope);
    } catch (error) {
      if (error instanceof LoyaltyException) {
        // Express rewrites url inside a mounted router; originalUrl keeps what the client sent.
        // The path only: a query string may carry what a log must not keep.
        const { method, url, originalUrl } = (request ?? {}) as Record<string, string | undefined>;
        const path = (originalUrl ?? url ?? '').split('?')[0];
        this.logger.debug(
          `Refused request ${method ?? ''} ${path}: ${error.code}, ${error.message}`,
        );
      }
      throw error;
    }
    // For @CurrentToken(): what the token may read and write (its space).
    if (request) rememberToken(request, token);
    return true;
  }
}
