import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { GraphQLResolveInfo } from 'graphql';
import type { DataSource, Repository } from 'typeorm';
import { dialectOf } from '../../storage/engines';
import { ErrorCode } from '../errors/error-code';
import { LoyaltyException } from '../errors/loyalty.exception';
import type { ProfileEntity } from '../../profiles/profile.entity';
import { LeaderboardsResolver } from '../../leaderboards/graphql/leaderboards.resolver';
import type { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { Space } from '../../spaces/space.model';
import { SpacesResolver } from '../../spaces/spaces.resolver';
import type { SpacesService } from '../../spaces/spaces.service';
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

describe("a page's address lookup past its deadline", () => {
  it('reads nothing and fails the page addresses with REQUEST_TIMEOUT', async () => {
    const query = jest.fn().mockResolvedValue([]);
    const profiles = new ProfilesService(
      {
        manager: { query, connection: { options: { type: 'better-sqlite3' } } },
        metadata: { columns: [{ databaseName: 'address_key', propertyName: 'addressKey' }] },
      } as unknown as Repository<ProfileEntity>,
      dialectOf({ options: { type: 'better-sqlite3' } } as DataSource),
    );
    const request = { headers: {} };
    const controller = attachDeadline(request);
    await expect(profiles.addressesOfPage(request, ['0xaa'])).resolves.toMatchObject([
      { id: '0xaa' },
    ]);
    expect(query).toHaveBeenCalledTimes(1);
    controller.abort();
    expect(codeOf(() => profiles.addressesOfPage(request, ['0xbb']))).toBe(
      ErrorCode.REQUEST_TIMEOUT,
    );
    expect(query).toHaveBeenCalledTimes(1);
  });
});

describe('field resolvers of Space past the deadline (Nest runs no guards on them)', () => {
  const space = Object.assign(new Space(), { id: '1', spaceId: 1 });

  it('start no board read, no address lookup and no sprint list', async () => {
    const request = { headers: {} };
    const controller = attachDeadline(request);
    const leaderboards = { getPage: jest.fn(), getAddressRank: jest.fn() };
    const spaces = { listSprints: jest.fn().mockResolvedValue([]) };
    const boards = new LeaderboardsResolver(leaderboards as unknown as LeaderboardsService);
    const sprints = new SpacesResolver(spaces as unknown as SpacesService);
    const context = { req: request };
    const info = { fieldNodes: [], fragments: {} } as unknown as GraphQLResolveInfo;
    await expect(sprints.sprints(space, context)).resolves.toEqual([]);
    controller.abort();
    expect(codeOf(() => boards.loyaltyPointsRanks(space, {}, context, info))).toBe(
      ErrorCode.REQUEST_TIMEOUT,
    );
    expect(
      codeOf(() => boards.addressLoyaltyPoints(space, { address: '0xaa' }, context, info)),
    ).toBe(ErrorCode.REQUEST_TIMEOUT);
    await expect(sprints.sprints(space, context)).rejects.toMatchObject({
      code: ErrorCode.REQUEST_TIMEOUT,
    });
    expect(leaderboards.getPage).not.toHaveBeenCalled();
    expect(leaderboards.getAddressRank).not.toHaveBeenCalled();
    expect(spaces.listSprints).toHaveBeenCalledTimes(1);
  });
});
