import { ArgsType, Field, Int } from '@nestjs/graphql';

@ArgsType()
export class AddressLoyaltyPointsArgs {
  @Field(() => String)
  address!: string;

  @Field(() => Int, { nullable: true })
  sprintId?: number | null;
}
