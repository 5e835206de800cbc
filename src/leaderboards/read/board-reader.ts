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

/** Ranks read at once for {@link BoardReader.findEntries}: a few connections, not the pool. */
const RANKS_AT_ONCE = 4;

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

  /**
   * Entries strictly ahead of `key` in rank order, whether or not `key` is on the board: O(log n)
   * in the rank index, a bucket's entries in SQL (see SqlBoardReader).
   */
  abstract countAhead(board: BoardRef, key: RankKey): Promise<number>;

  /**
   * The address's entries on the space's boards `sprintIds` (ALL_TIME_SPRINT_ID for all-time), by
   * sprint id, each with its rank; a board it is not on is absent. The entries are read in one
   * statement, so only the boards it is on cost a rank.
   */
  abstract findEntries(
    spaceId: number,
    sprintIds: readonly number[],
    addressKey: string,
  ): Promise<Map<number, RankedEntry>>;
}

/** Ranks each entry by the entries ahead of it on its board, a few reads at a time. */
export async function rankEntries(
  entries: ReadonlyMap<number, RankKey>,
  countAhead: (sprintId: number, key: RankKey) => Promise<number>,
): Promise<Map<number, RankedEntry>> {
  const pending = [...entries];
  const ranked = new Map<number, RankedEntry>();
  const worker = async () => {
    for (let next = pending.shift(); next; next = pending.shift()) {
      const [sprintId, key] = next;
      ranked.set(sprintId, { ...key, rank: (await countAhead(sprintId, key)) + 1 });
    }
  };
  await Promise.all(Array.from({ length: RANKS_AT_ONCE }, worker));
  return ranked;
}
