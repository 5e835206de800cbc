/**
 * The position of an entry on a board (docs/api.md, Ranking): points descending, then the time the
 * address reached its current total ascending, then the lower-cased address ascending.
 */
export interface RankKey {
  points: number;
  /** occurredAt of the address's latest points event on the board, in epoch milliseconds. */
  reachedAt: number;
  /** The lower-cased address. */
  addressKey: string;
}

/** Negative when `a` ranks before `b`. Addresses compare by code unit, as the databases do. */
export function compareRankKeys(a: RankKey, b: RankKey): number {
  if (a.points !== b.points) return b.points - a.points;
  if (a.reachedAt !== b.reachedAt) return a.reachedAt - b.reachedAt;
  if (a.addressKey === b.addressKey) return 0;
  return a.addressKey < b.addressKey ? -1 : 1;
}

/** A board is a space's all-time ranking (sprintId 0) or one sprint's. */
export interface BoardRef {
  spaceId: number;
  sprintId: number;
}

export const ALL_TIME_SPRINT_ID = 0;
