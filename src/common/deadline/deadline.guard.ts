import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { requestOfContext } from '../graphql/request-of';
import { throwIfPastDeadline } from './deadline';

/**
 * Once a request's deadline has passed, none of the guarded root fields (those that read the
 * database) starts resolving: the rest of its work stops instead of holding connections. Nest
 * runs no guards on field resolvers, so the fields of Space that read the database call
 * throwIfPastDeadline themselves, and the per-entry `address` field reads through the request's
 * profile loader, which checks the same.
 *
 * Not an Apollo plugin's willResolveField: that hook makes Apollo wrap every field of the
 * schema, a cost on every field of every request (a tenth of the fixed-page floor's throughput,
 * measured; Apollo's cache-control plugin, the same way, about a third).
 */
@Injectable()
export class DeadlineGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    throwIfPastDeadline(requestOfContext(GqlExecutionContext.create(context).getContext()));
    return true;
  }
}
