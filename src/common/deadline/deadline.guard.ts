import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { requestOfContext } from '../graphql/request-of';
import { throwIfPastDeadline } from './deadline';

/**
 * Past the request's deadline, guarded root fields (those that read the database) do not start.
 * Nest guards no field resolvers: Space's database fields and the profile loader check it
 * themselves. Not Apollo's willResolveField, which wraps every field of every request.
 */
@Injectable()
export class DeadlineGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    throwIfPastDeadline(requestOfContext(GqlExecutionContext.create(context).getContext()));
    return true;
  }
}
