import { Context, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { requestOfContext } from '../../common/graphql/request-of';
import { Address } from '../../profiles/address.model';
import { ProfilesService } from '../../profiles/profiles.service';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';

@Resolver(() => LoyaltyPointsRank)
export class LoyaltyPointsRankResolver {
  constructor(private readonly profiles: ProfilesService) {}

  /** Batched per request: one profiles query for the whole page. */
  @ResolveField(() => Address, { nullable: true })
  address(@Parent() rank: LoyaltyPointsRank, @Context() context: object): Promise<Address> {
    return this.profiles.loaderFor(requestOfContext(context) ?? context).load(rank.addressKey);
  }
}
