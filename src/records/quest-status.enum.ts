export enum QuestStatus {
  Draft = 'Draft',
  Active = 'Active',
  NotStarted = 'NotStarted',
  Expired = 'Expired',
  CapReached = 'CapReached',
  Deleted = 'Deleted',
}

export const QUEST_STATUSES: readonly string[] = Object.values(QuestStatus);
