import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import { Space } from '../../spaces/space.model';
import { CampaignParticipant } from './campaign-participant.model';
import { CampaignStatus } from './campaign-status.enum';

/**
 * One of our quests as Galxe's `Campaign` (docs/galxe-compatibility.md): the fields our data
 * answers truthfully. `startTime` and `endTime` (Unix seconds) are resolved by CampaignsResolver.
 */
@ObjectType('Campaign')
export class Campaign {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => CampaignStatus)
  status!: CampaignStatus;

  @Field(() => String, {
    nullable: true,
    description: "The quest's own type, as given by its records (Galxe: a GamificationType)",
  })
  type!: string | null;

  @Field(() => Int, { nullable: true, description: 'At most this many participants; null: no cap' })
  cap!: number | null;

  @Field(() => CampaignParticipant)
  participants!: CampaignParticipant;

  @Field(() => Space)
  space!: Space;

  /** Epoch milliseconds, for the time fields; not part of the schema. */
  startMs!: number | null;
  endMs!: number | null;
}
