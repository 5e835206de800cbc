import type { BoardPage, RankedEntry } from '../read/board-reader';
import type { CursorCodec } from '../paging/cursor-codec';
import type { LoyaltyPointsRankEdge } from './loyalty-points-rank-edge.model';
import { LoyaltyPointsRank } from './loyalty-points-rank.model';
import type { LoyaltyPointsRanks } from './loyalty-points-ranks.model';
import type { BoardRef } from '../ranking/ranking';

export function toLoyaltyPointsRank(board: BoardRef, entry: RankedEntry): LoyaltyPointsRank {
  const rank = new LoyaltyPointsRank();
  rank.id = `${board.spaceId}:${board.sprintId}:${entry.addressKey}`;
  rank.rank = entry.rank;
  rank.points = entry.points;
  rank.addressKey = entry.addressKey;
  return rank;
}

/**
 * A page as GraphQL reads it. What a query may not ask for is computed only when read: the
 * cursors (each an HMAC) and the Relay-style `edges` (most pages are read through `list`).
 */
export function toLoyaltyPointsRanks(
  board: BoardRef,
  page: BoardPage,
  codec: CursorCodec,
): LoyaltyPointsRanks {
  const entries = page.entries;
  const list = entries.map((entry) => toLoyaltyPointsRank(board, entry));
  const cursors: Array<string | undefined> = [];
  const cursorAt = (i: number): string => (cursors[i] ??= codec.encode(board, entries[i]));
  const last = entries.length - 1;
  let edges: LoyaltyPointsRankEdge[] | undefined;
  return {
    totalCount: page.totalCount,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      get startCursor() {
        return last >= 0 ? cursorAt(0) : null;
      },
      get endCursor() {
        return last >= 0 ? cursorAt(last) : null;
      },
    },
    list,
    get edges() {
      return (edges ??= list.map((node, i) => ({
        node,
        get cursor() {
          return cursorAt(i);
        },
      })));
    },
  };
}
