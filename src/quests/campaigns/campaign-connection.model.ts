import { Field, Int, ObjectType } from '@nestjs/graphql';
import { PageInfo } from '../../leaderboards/graphql/page-info.model';
import { CampaignEdge } from './campaign-edge.model';
import { Campaign } from './campaign.model';

/** A page of a space's quests in Galxe's shape (`campaigns(input: ListCampaignInput!)`). */
@ObjectType('CampaignConnection')
export class CampaignConnection {
  @Field(() => Int, { description: 'Quests that match the input, on every page' })
  totalCount!: number;

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => [CampaignEdge])
  edges!: CampaignEdge[];

  @Field(() => [Campaign])
  list!: Campaign[];
}
