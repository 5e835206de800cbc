import { Field, Int, ObjectType } from '@nestjs/graphql';

/** Galxe's `CampaignParticipant`, of which our data answers the count only. */
@ObjectType('CampaignParticipant')
export class CampaignParticipant {
  @Field(() => Int, { description: 'Addresses that took part in the quest' })
  participantsCount!: number;
}
