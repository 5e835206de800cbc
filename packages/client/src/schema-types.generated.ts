// Generated from schema.gql by scripts/generate-client-types.js. Do not edit.
/* eslint-disable */

export interface GqlAddress {
  address: string;
  avatar: string | null;
  id: string;
  username: string | null;
}

export interface GqlLoyaltyPointsRank {
  address: GqlAddress | null;
  id: string;
  points: number;
  rank: number;
}

export interface GqlLoyaltyPointsRankEdge {
  cursor: string;
  node: GqlLoyaltyPointsRank;
}

export interface GqlLoyaltyPointsRanks {
  edges: Array<GqlLoyaltyPointsRankEdge>;
  list: Array<GqlLoyaltyPointsRank>;
  pageInfo: GqlPageInfo;
  totalCount: number;
}

export interface GqlPageInfo {
  endCursor: string | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
}

export interface GqlQuery {
  quest: GqlQuest | null;
  space: GqlSpace | null;
  spaceLoyaltyPointsRanks: GqlLoyaltyPointsRanks | null;
}

export interface GqlQueryQuestArgs {
  id: string;
}

export interface GqlQuerySpaceArgs {
  id: number;
}

export interface GqlQuerySpaceLoyaltyPointsRanksArgs {
  cursorAfter?: string | null;
  spaceId: number;
  sprintId?: number | null;
}

export interface GqlQuest {
  cap: number | null;
  endTime: string | null;
  id: string;
  name: string;
  participantsCount: number;
  startTime: string | null;
  status: GqlQuestStatus;
  type: string | null;
}

export type GqlQuestStatus = 'Active' | 'CapReached' | 'Deleted' | 'Draft' | 'Expired' | 'NotStarted';

export interface GqlSpace {
  addressLoyaltyPoints: GqlLoyaltyPointsRank | null;
  description: string | null;
  id: string;
  loyaltyPointsRanks: GqlLoyaltyPointsRanks | null;
  name: string;
  sprints: Array<GqlSprint>;
}

export interface GqlSpaceAddressLoyaltyPointsArgs {
  address: string;
  sprintId?: number | null;
}

export interface GqlSpaceLoyaltyPointsRanksArgs {
  after?: string | null;
  cursorAfter?: string | null;
  cursorBefore?: string | null;
  first?: number | null;
  sprintId?: number | null;
}

export interface GqlSprint {
  endTime: string;
  id: number;
  name: string;
  startTime: string;
}
