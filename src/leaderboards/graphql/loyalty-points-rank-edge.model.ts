import { Field, ObjectType } from '@nestjs/graphql';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';

@ObjectType('LoyaltyPointsRankEdge')
export class LoyaltyPointsRankEdge {
  @Field(() => String)
  cursor!: string;

  @Field(() => LoyaltyPointsRank)
  node!: LoyaltyPointsRank;
}
