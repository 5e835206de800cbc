import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { GqlContextType, GqlExecutionContext } from '@nestjs/graphql';
import { requestOfContext } from '../common/graphql/request-of';
import type { AuthenticatedToken } from './access-tokens.service';

const TOKENS = new WeakMap<object, AuthenticatedToken>();

/** Kept by {@link AccessTokenGuard} for the request it let through. */
export function rememberToken(request: object, token: AuthenticatedToken): void {
  TOKENS.set(request, token);
}

/** The token the guard accepted for this HTTP request, if it ran. */
export function tokenOfRequest(request: object | undefined): AuthenticatedToken | null {
  return (request && TOKENS.get(request)) ?? null;
}

/** The HTTP request of a route or a GraphQL resolver. */
export function requestOfExecution(context: ExecutionContext): object | undefined {
  return context.getType<GqlContextType>() === 'graphql'
    ? requestOfContext(GqlExecutionContext.create(context).getContext())
    : context.switchToHttp().getRequest<object>();
}

/**
 * The token {@link AccessTokenGuard} accepted for this request: its id, scopes and space. Null on
 * a route the guard does not cover (`@Public()`), which callers treat as no rights at all.
 */
export const CurrentToken = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedToken | null =>
    tokenOfRequest(requestOfExecution(context)),
);
