import { ArgsType, Field, Int } from '@nestjs/graphql';
import { LoyaltyPointsRankOrder } from './loyalty-points-rank-order.enum';

@ArgsType()
export class LoyaltyPointsRanksArgs {
  @Field(() => String, {
    nullable: true,
    description: 'Start after this cursor; null or absent for the first page',
  })
  cursorAfter?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The page of entries just before this cursor',
  })
  cursorBefore?: string | null;

  @Field(() => Int, { nullable: true, description: 'Restrict the ranking to one sprint' })
  sprintId?: number | null;

  @Field(() => Int, {
    nullable: true,
    deprecationReason: 'Use cursor-based pagination with cursorAfter / cursorBefore.',
    description: 'Page size (default 50, at most 1000)',
  })
  first?: number | null;

  @Field(() => String, {
    nullable: true,
    deprecationReason: 'Use cursor-based pagination with cursorAfter / cursorBefore.',
  })
  after?: string | null;

  /** Galxe profile only (GALXE_ARGUMENTS): the other profiles have no `order`. */
  @Field(() => LoyaltyPointsRankOrder, {
    nullable: true,
    description: 'Points (the default), as Galxe names the order of the board',
  })
  order?: LoyaltyPointsRankOrder | null;
}
