import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { requestOfContext } from '../common/graphql/request-of';
import { throwIfPastDeadline } from './deadline';

/**
 * Once a request's deadline has passed, none of the guarded fields (those that read the
 * database) starts resolving: the rest of its work stops instead of holding connections. The
 * per-entry `address` field reads through the request's profile loader, which checks the same.
 *
 * A guard on the resolvers that need it, not an Apollo plugin's willResolveField: that hook makes
 * Apollo wrap every field of the schema, which cost the fixed-page floor about a tenth of its
 * throughput.
 */
@Injectable()
export class DeadlineGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    throwIfPastDeadline(requestOfContext(GqlExecutionContext.create(context).getContext()));
    return true;
  }
}
