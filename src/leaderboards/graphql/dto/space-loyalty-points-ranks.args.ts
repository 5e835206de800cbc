import { ArgsType, Field, Int } from '@nestjs/graphql';

@ArgsType()
export class SpaceLoyaltyPointsRanksArgs {
  @Field(() => Int)
  spaceId!: number;

  @Field(() => Int, { nullable: true })
  sprintId?: number | null;

  @Field(() => String, { nullable: true })
  cursorAfter?: string | null;
}
