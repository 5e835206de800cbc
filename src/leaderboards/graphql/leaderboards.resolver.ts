import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Info, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { AccessTokenGuard } from '../../auth/access-token.guard';
import type { AuthenticatedToken } from '../../auth/access-tokens.service';
import { CurrentToken } from '../../auth/current-token.decorator';
import { requestOfContext } from '../../common/graphql/request-of';
import { throwIfPastDeadline } from '../../common/deadline/deadline';
import { DeadlineGuard } from '../../common/deadline/deadline.guard';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { LoyaltyExceptionFilter } from '../../common/errors/loyalty-exception.filter';
import { ExtensionField } from '../../common/graphql/extension-field.decorator';
import { selectsPath } from '../../common/graphql/selection';
import { Space } from '../../spaces/space.model';
import { AddressLoyaltyPointsArgs } from './dto/address-loyalty-points.args';
import { LoyaltyPointsRankOrder } from './dto/loyalty-points-rank-order.enum';
import { LoyaltyPointsRanksArgs } from './dto/loyalty-points-ranks.args';
import { SpaceLoyaltyPointsRanksArgs } from './dto/space-loyalty-points-ranks.args';
import { LeaderboardsService, RankReadOptions } from './leaderboards.service';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';
import { LoyaltyPointsRanks } from './loyalty-points-ranks.model';

@Resolver(() => Space)
@UseGuards(DeadlineGuard, AccessTokenGuard)
@UseFilters(LoyaltyExceptionFilter)
export class LeaderboardsResolver {
  constructor(private readonly leaderboards: LeaderboardsService) {}

  @Query(() => LoyaltyPointsRanks, {
    nullable: true,
    description: "A page of a space's leaderboard",
  })
  spaceLoyaltyPointsRanks(
    @Args() args: SpaceLoyaltyPointsRanksArgs,
    @CurrentToken() token: AuthenticatedToken | null,
    @Context() context: object,
    @Info() info: GraphQLResolveInfo,
  ): Promise<LoyaltyPointsRanks> {
    return this.leaderboards.getPageOfSpace(
      args.spaceId,
      args.sprintId,
      { cursorAfter: args.cursorAfter },
      token,
      pageReadOptions(context, info),
    );
  }

  // The Space parent comes from space(id), which checked that the token may read it.
  @ResolveField(() => LoyaltyPointsRanks, {
    nullable: true,
    description: 'A page of the leaderboard',
  })
  loyaltyPointsRanks(
    @Parent() space: Space,
    @Args() args: LoyaltyPointsRanksArgs,
    @Context() context: object,
    @Info() info: GraphQLResolveInfo,
  ): Promise<LoyaltyPointsRanks> {
    // Guards do not run on field resolvers (Nest's fieldResolverEnhancers): checked here.
    throwIfPastDeadline(requestOfContext(context));
    if (args.order === LoyaltyPointsRankOrder.GalxeID)
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        'order GalxeID is not supported: this service keeps no Galxe IDs to sort by; use Points (the default)',
      );
    return this.leaderboards.getPage(
      space.spaceId,
      args.sprintId,
      args,
      pageReadOptions(context, info),
    );
  }

  @ExtensionField()
  @ResolveField(() => LoyaltyPointsRank, {
    nullable: true,
    description: "One address's points and rank; null when it is not on the board",
  })
  addressLoyaltyPoints(
    @Parent() space: Space,
    @Args() args: AddressLoyaltyPointsArgs,
    @Context() context: object,
    @Info() info: GraphQLResolveInfo,
  ): Promise<LoyaltyPointsRank | null> {
    const request = requestOfContext(context);
    throwIfPastDeadline(request);
    return this.leaderboards.getAddressRank(space.spaceId, args.address, args.sprintId, {
      addresses: selectsPath(info, ['address']),
      request,
    });
  }
}

/**
 * A page's addresses are loaded with the page, in one lookup, when the query asks for them: a
 * field resolver per entry would cost Nest's and graphql-js's per-call work fifty times a page.
 */
function pageReadOptions(context: object, info: GraphQLResolveInfo): RankReadOptions {
  return {
    addresses:
      selectsPath(info, ['list', 'address']) || selectsPath(info, ['edges', 'node', 'address']),
    request: requestOfContext(context),
  };
}
