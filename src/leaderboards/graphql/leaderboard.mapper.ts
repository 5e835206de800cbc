import type { BoardPage, RankedEntry } from '../read/board-reader';
import type { CursorCodec } from '../paging/cursor-codec';
import { LoyaltyPointsRankEdge } from './loyalty-points-rank-edge.model';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';
import { LoyaltyPointsRanks } from './loyalty-points-ranks.model';
import { PageInfo } from './page-info.model';
import type { BoardRef } from '../ranking/ranking';

export function toLoyaltyPointsRank(board: BoardRef, entry: RankedEntry): LoyaltyPointsRank {
  return Object.assign(new LoyaltyPointsRank(), {
    id: `${board.spaceId}:${board.sprintId}:${entry.addressKey}`,
    rank: entry.rank,
    points: entry.points,
    addressKey: entry.addressKey,
  });
}

export function toLoyaltyPointsRanks(
  board: BoardRef,
  page: BoardPage,
  codec: CursorCodec,
): LoyaltyPointsRanks {
  // A cursor is signed (an HMAC): computed only for the edges whose cursor a query asks for.
  const edges = page.entries.map((entry) => {
    const edge = Object.assign(new LoyaltyPointsRankEdge(), {
      node: toLoyaltyPointsRank(board, entry),
    });
    let cursor: string | undefined;
    return Object.defineProperty(edge, 'cursor', {
      enumerable: true,
      get: () => (cursor ??= codec.encode(board, entry)),
    });
  });
  const pageInfo = Object.assign(new PageInfo(), {
    hasNextPage: page.hasNextPage,
    hasPreviousPage: page.hasPreviousPage,
    startCursor: edges.length > 0 ? edges[0].cursor : null,
    endCursor: edges.length > 0 ? edges[edges.length - 1].cursor : null,
  });
  return Object.assign(new LoyaltyPointsRanks(), {
    totalCount: page.totalCount,
    pageInfo,
    list: edges.map((edge) => edge.node),
    edges,
  });
}
