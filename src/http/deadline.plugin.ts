import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { requestOfContext } from '../common/graphql/request-of';
import { deadlineSignalOf } from './query-gate';

/**
 * Once a request's deadline has passed (it was already answered 503), no further field starts
 * resolving: the rest of its work stops instead of holding database connections.
 */
export class DeadlinePlugin implements ApolloServerPlugin<object> {
  requestDidStart({
    contextValue,
  }: {
    contextValue: object;
  }): Promise<GraphQLRequestListener<object>> {
    const signal = deadlineSignalOf(requestOfContext(contextValue));
    if (!signal) return Promise.resolve({});
    return Promise.resolve({
      executionDidStart: () =>
        Promise.resolve({
          willResolveField: () => {
            if (signal.aborted) throw new LoyaltyException(ErrorCode.REQUEST_TIMEOUT);
          },
        }),
    });
  }
}
