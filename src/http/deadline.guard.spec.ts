import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { Repository } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { ProfileEntity } from '../profiles/profile.entity';
import { ProfilesService } from '../profiles/profiles.service';
import { attachDeadline } from './deadline';
import { DeadlineGuard } from './deadline.guard';

/** A resolver's execution context as Nest builds it for GraphQL: (root, args, context, info). */
function fieldContext(request: object): ExecutionContextHost {
  const host = new ExecutionContextHost([{}, {}, { req: request }, {}]);
  host.setType('graphql');
  return host;
}

const codeOf = (run: () => unknown): ErrorCode | undefined => {
  try {
    run();
  } catch (error) {
    return (error as LoyaltyException).code;
  }
  return undefined;
};

describe('DeadlineGuard', () => {
  it('lets fields resolve until the request deadline, then refuses every further field', () => {
    const request = { headers: {} };
    const controller = attachDeadline(request);
    const guard = new DeadlineGuard();
    expect(guard.canActivate(fieldContext(request))).toBe(true);
    controller.abort();
    expect(codeOf(() => guard.canActivate(fieldContext(request)))).toBe(ErrorCode.REQUEST_TIMEOUT);
  });

  it('lets everything through for a request without a deadline (a host without our gate)', () => {
    expect(new DeadlineGuard().canActivate(fieldContext({ headers: {} }))).toBe(true);
  });
});

describe("a request's profile loader past its deadline", () => {
  it('reads nothing and fails the page addresses with REQUEST_TIMEOUT', async () => {
    const query = jest.fn().mockResolvedValue([]);
    const profiles = new ProfilesService({
      manager: { query },
    } as unknown as Repository<ProfileEntity>);
    const request = { headers: {} };
    const controller = attachDeadline(request);
    await expect(profiles.loaderFor(request).load('0xaa')).resolves.toMatchObject({ id: '0xaa' });
    expect(query).toHaveBeenCalledTimes(1);
    controller.abort();
    await expect(profiles.loaderFor(request).load('0xbb')).rejects.toMatchObject({
      code: ErrorCode.REQUEST_TIMEOUT,
    });
    expect(query).toHaveBeenCalledTimes(1);
  });
});
