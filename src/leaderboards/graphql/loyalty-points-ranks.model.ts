import { Field, Int, ObjectType } from '@nestjs/graphql';
import { ExtensionField } from '../../common/graphql/extension-field.decorator';
import { LoyaltyPointsRankEdge } from './loyalty-points-rank-edge.model';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';
import { PageInfo } from './page-info.model';

/** One page of a leaderboard. */
@ObjectType('LoyaltyPointsRanks')
export class LoyaltyPointsRanks {
  @Field(() => Int, { description: 'Number of entries on the board (not on this page)' })
  totalCount!: number;

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => [LoyaltyPointsRank])
  list!: LoyaltyPointsRank[];

  @ExtensionField()
  @Field(() => [LoyaltyPointsRankEdge], {
    description: 'Relay-style view of the same page as list',
  })
  edges!: LoyaltyPointsRankEdge[];
}
