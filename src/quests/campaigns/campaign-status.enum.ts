import { registerEnumType } from '@nestjs/graphql';
import { QuestStatus } from '../../records/quest-status.enum';

/**
 * Galxe's `CampaignStatus`: the same six values as our QuestStatus (Draft, Active, NotStarted,
 * Expired, CapReached, Deleted) under Galxe's name, so documents that declare
 * `$statuses: [CampaignStatus!]` validate. A copy of the object: Nest registers one name per enum.
 */
export const CampaignStatus: typeof QuestStatus = { ...QuestStatus };
export type CampaignStatus = QuestStatus;

registerEnumType(CampaignStatus, { name: 'CampaignStatus' });
