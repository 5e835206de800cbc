import type { PageRequest } from '../paging/page-request';
import type { BoardRef, RankKey } from '../ranking/ranking';

export interface RankedEntry extends RankKey {
  /** 1-based position in rank order. */
  rank: number;
}

export interface BoardPage {
  entries: RankedEntry[];
  totalCount: number;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * The leaderboard read path behind one seam: pages, ranks, totalCount and one address's rank.
 * Resolvers and services only see this; the SQL implementation can be replaced by an in-memory
 * rank index without touching them.
 */
export abstract class BoardReader {
  abstract readPage(board: BoardRef, request: PageRequest): Promise<BoardPage>;

  /** The address's entry with its rank, or null when it is not on the board (0 points or less). */
  abstract findEntry(board: BoardRef, addressKey: string): Promise<RankedEntry | null>;

  abstract countEntries(board: BoardRef): Promise<number>;
}
