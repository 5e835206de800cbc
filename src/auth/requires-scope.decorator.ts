import { SetMetadata } from '@nestjs/common';
import type { TokenScope } from './token-scopes';

export const REQUIRED_SCOPE = 'loyalty:requiredScope';

/**
 * The scope {@link AccessTokenGuard} requires of a resolver or route's token. Without it the guard
 * requires `query`, the scope of the GraphQL API.
 */
export const RequiresScope = (scope: TokenScope): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRED_SCOPE, scope);
