import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlContextType, GqlExecutionContext } from '@nestjs/graphql';
import { requestOfContext } from '../common/graphql/request-of';
import { AccessTokensService } from './access-tokens.service';
import { IS_PUBLIC } from './public.decorator';

/**
 * Requires a valid `access-token` header. Applied to every resolver class of the module; the
 * check runs once per HTTP request however many fields ask.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: AccessTokensService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
        context.getHandler(),
        context.getClass(),
      ])
    ) {
      return true;
    }
    const request =
      context.getType<GqlContextType>() === 'graphql'
        ? requestOfContext(GqlExecutionContext.create(context).getContext())
        : context
            .switchToHttp()
            .getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    await this.tokens.authenticateRequest(request ?? { headers: {} });
    return true;
  }
}
