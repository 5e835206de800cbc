import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import { ExtensionField } from '../../common/graphql/extension-field.decorator';
import { Address } from '../../profiles/address.model';

@ObjectType('LoyaltyPointsRank')
export class LoyaltyPointsRank {
  @ExtensionField()
  @Field(() => ID, { description: 'Stable id of this address on this board' })
  id!: string;

  @Field(() => Int, { description: "The user's 1-based position on the leaderboard" })
  rank!: number;

  @Field(() => Int, { description: "The user's total loyalty points on this board" })
  points!: number;

  @Field(() => Address, { nullable: true })
  address?: Address | null;

  /** Resolves `address`; not part of the schema. */
  addressKey!: string;
}
