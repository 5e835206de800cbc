import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccessTokensService, TokenBearingRequest } from './access-tokens.service';
import { rememberToken, requestOfExecution } from './current-token.decorator';
import { IS_PUBLIC } from './public.decorator';
import { REQUIRED_SCOPE } from './requires-scope.decorator';
import type { TokenScope } from './token-scopes';

/**
 * Requires a valid `access-token` header whose token has the `query` scope (or the one named by
 * `@RequiresScope`): 401 without a valid token, 403 INSUFFICIENT_SCOPE without the scope. Applied
 * to every resolver class of the module; the token is checked once per HTTP request however many
 * fields ask.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
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
    const token = await this.tokens.authorizeRequest(request ?? { headers: {} }, scope);
    // For @CurrentToken(): what the token may read and write (its space).
    if (request) rememberToken(request, token);
    return true;
  }
}
