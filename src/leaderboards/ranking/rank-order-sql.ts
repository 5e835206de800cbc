/*
 * The rank order (docs/api.md, Ranking) in SQL over board_entries, for every reader of it: the
 * read path's statements and the rank buckets'.
 */

/** An entry's rank key, under the names RankKey has. */
export const ENTRY_COLUMNS = 'address_key AS addressKey, points, reached_at AS reachedAt';
/** Rank order over the table's columns (ix_board_entries_rank's order). */
export const RANK_ORDER = 'points DESC, reached_at ASC, address_key ASC';
/** Rank order over ENTRY_COLUMNS' output names (a union's or a subquery's). */
export const RANK_ORDER_OUT = 'points DESC, reachedAt ASC, addressKey ASC';
