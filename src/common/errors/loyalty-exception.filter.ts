import { Catch } from '@nestjs/common';
import { GqlExceptionFilter } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { LoyaltyException } from './loyalty.exception';

/**
 * Turns a domain exception raised in a guarded resolver (or its guard) into a GraphQL error, so
 * it is not logged as an unexpected failure by Nest's fallback handler. Scoped to the module's
 * resolvers with `@UseFilters`, never app-wide: a host keeps its own filters.
 */
@Catch(LoyaltyException)
export class LoyaltyExceptionFilter implements GqlExceptionFilter {
  catch(exception: LoyaltyException): GraphQLError {
    return new GraphQLError(exception.message, { extensions: { ...exception.extensions } });
  }
}
