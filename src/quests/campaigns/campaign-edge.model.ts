import { Field, ObjectType } from '@nestjs/graphql';
import { Campaign } from './campaign.model';

@ObjectType('CampaignEdge')
export class CampaignEdge {
  @Field(() => Campaign)
  node!: Campaign;

  @Field(() => String, {
    description: "The campaign's 0-based index in the list, as `after` takes it",
  })
  cursor!: string;
}
