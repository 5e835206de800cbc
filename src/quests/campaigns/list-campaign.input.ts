import { Field, ID, InputType, Int } from '@nestjs/graphql';
import { CampaignStatus } from './campaign-status.enum';
import { ListType } from './list-type.enum';

/**
 * Galxe's `ListCampaignInput`, with every field its schema, docs and public clients send, so their
 * variables coerce (an undeclared field would fail the whole request). What each one does here is
 * in campaign-list.ts and docs/galxe-compatibility.md: a filter, the page, or, for what our data
 * cannot answer (chains, rewards, recommendations, ...), refused once given a value.
 */
@InputType('ListCampaignInput')
export class ListCampaignInput {
  @Field(() => Int, { nullable: true, description: 'Page size: 20 by default, at most 100' })
  first?: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'The 0-based index of the last quest already seen ("-1": the first page)',
  })
  after?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: "The space's id; required by the root campaigns",
  })
  spaceId?: string | null;

  @Field(() => [ID], { nullable: true, description: 'Only these quests' })
  ids?: string[] | null;

  @Field(() => String, { nullable: true, description: 'Names that contain it, in any case' })
  searchString?: string | null;

  @Field(() => [CampaignStatus], { nullable: true })
  statuses?: CampaignStatus[] | null;

  @Field(() => CampaignStatus, { nullable: true })
  status?: CampaignStatus | null;

  @Field(() => [String], {
    nullable: true,
    description: "Quests of these types (the quest's type)",
  })
  types?: string[] | null;

  @Field(() => ListType, { nullable: true })
  listType?: ListType | null;

  @Field(() => Boolean, { nullable: true, description: 'Refused when true: no admin view here' })
  forAdmin?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Quests here have no children' })
  excludeChildren?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'Quests here have no parents' })
  excludeParent?: boolean | null;

  @Field(() => [String], { nullable: true })
  chains?: string[] | null;

  @Field(() => [String], { nullable: true })
  gasTypes?: string[] | null;

  @Field(() => [String], { nullable: true })
  credSources?: string[] | null;

  @Field(() => [String], { nullable: true })
  rewardTypes?: string[] | null;

  @Field(() => [String], { nullable: true })
  permissions?: string[] | null;

  @Field(() => [String], { nullable: true })
  spaceCategories?: string[] | null;

  @Field(() => [String], { nullable: true })
  backers?: string[] | null;

  @Field(() => [Int], { nullable: true })
  isVerified?: number[] | null;

  @Field(() => Boolean, { nullable: true })
  isRecurring?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  listTrendingWithoutFilter?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  orderByTokenValue?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  startTimeLastWeek?: boolean | null;

  @Field(() => String, { nullable: true })
  recommendByUser?: string | null;

  @Field(() => String, { nullable: true })
  recommendByCampaignId?: string | null;

  @Field(() => String, { nullable: true })
  bookmarkedBy?: string | null;

  @Field(() => String, { nullable: true })
  claimableByUser?: string | null;

  @Field(() => String, { nullable: true })
  relatedByAddr?: string | null;
}
