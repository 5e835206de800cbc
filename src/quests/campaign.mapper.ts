import type { Space } from '../spaces/space.model';
import { Campaign } from './campaigns/campaign.model';
import { CampaignConnection } from './campaigns/campaign-connection.model';
import { CampaignEdge } from './campaigns/campaign-edge.model';
import type { CampaignPage } from './campaigns/campaign-list';
import { PageInfo } from '../leaderboards/graphql/page-info.model';
import type { QuestEntity } from './quest.entity';

export function toCampaign(entity: QuestEntity, space: Space): Campaign {
  return Object.assign(new Campaign(), {
    id: entity.id,
    name: entity.name,
    status: entity.status,
    type: entity.type,
    cap: entity.cap,
    participants: { participantsCount: entity.participantsCount },
    space,
    startMs: entity.startTime,
    endMs: entity.endTime,
  });
}

/** A page as Galxe's connection: cursors are the 0-based indexes `after` takes. */
export function toCampaignConnection(
  page: CampaignPage<QuestEntity>,
  space: Space,
): CampaignConnection {
  const list = page.quests.map((quest) => toCampaign(quest, space));
  const edges = list.map((node, i) =>
    Object.assign(new CampaignEdge(), { node, cursor: String(page.offset + i) }),
  );
  const empty = list.length === 0;
  const pageInfo = Object.assign(new PageInfo(), {
    startCursor: empty ? null : String(page.offset),
    endCursor: empty ? null : String(page.offset + list.length - 1),
    hasNextPage: !empty && page.offset + list.length < page.totalCount,
    hasPreviousPage: page.offset > 0 && page.totalCount > 0,
  });
  return Object.assign(new CampaignConnection(), {
    totalCount: page.totalCount,
    pageInfo,
    edges,
    list,
  });
}
