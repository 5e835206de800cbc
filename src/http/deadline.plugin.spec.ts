import type { GraphQLRequestListener } from '@apollo/server';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { DeadlinePlugin } from './deadline.plugin';
import { attachDeadline } from './query-gate';

describe('DeadlinePlugin', () => {
  it('lets fields resolve until the request deadline, then refuses every further field', async () => {
    const request = { headers: {} };
    const controller = attachDeadline(request);
    const listener: GraphQLRequestListener<object> = await new DeadlinePlugin().requestDidStart({
      contextValue: { req: request },
    });
    const execution = await listener.executionDidStart!({} as never);
    const resolveField = () =>
      (execution as { willResolveField: (arg: never) => unknown }).willResolveField({} as never);
    expect(resolveField).not.toThrow();
    controller.abort();
    expect(resolveField).toThrow(LoyaltyException);
    try {
      resolveField();
    } catch (error) {
      expect((error as LoyaltyException).code).toBe(ErrorCode.REQUEST_TIMEOUT);
    }
  });

  it('does nothing for a request without a deadline (a host without our gate)', async () => {
    await expect(
      new DeadlinePlugin().requestDidStart({ contextValue: { req: { headers: {} } } }),
    ).resolves.toEqual({});
  });
});
