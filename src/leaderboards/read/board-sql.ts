import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { ENTRY_COLUMNS, RANK_ORDER, RANK_ORDER_OUT } from '../ranking/rank-order-sql';

/*
 * The read path's SQL over ix_board_entries_rank, apart so that a spec can EXPLAIN what runs.
 * Every rank-order read names the index: MariaDB may otherwise count "points > ?" through the
 * primary key, the whole board.
 */

export interface BoardSql {
  offsetPage: string;
  findEntry: string;
  countEntries: string;
  countAhead: string;
  pageAfter: string;
  pageBefore: string;
  wholeBoard: string;
  boardBefore: string;
  boardFrom: string;
  exportFirst: string;
  exportAfter: string;
  boardState: string;
}

const COLUMNS = ENTRY_COLUMNS;
const ON_BOARD = 'space_id = ? AND sprint_id = ? AND points > 0';
const FORWARD = RANK_ORDER;
const BACKWARD = 'points ASC, reached_at DESC, address_key DESC';
/** The same orders over the union's output columns. */
const FORWARD_OUT = RANK_ORDER_OUT;
const BACKWARD_OUT = 'points ASC, reachedAt DESC, addressKey DESC';

/** The statements for one dialect; params are documented on each builder below. */
export function boardSql(dialect: SqlDialect): BoardSql {
  const ranked = dialect.withIndex('board_entries', 'ix_board_entries_rank');
  return {
    // Params: spaceId, sprintId, limit, offset.
    offsetPage: `SELECT ${COLUMNS} FROM ${ranked} WHERE ${ON_BOARD} ORDER BY ${FORWARD} LIMIT ? OFFSET ?`,
    // Params: spaceId, sprintId, addressKey (a primary key lookup).
    findEntry: `SELECT ${COLUMNS} FROM board_entries WHERE ${ON_BOARD} AND address_key = ?`,
    // Params: spaceId, sprintId.
    countEntries:
      'SELECT entry_count AS entryCount FROM boards WHERE space_id = ? AND sprint_id = ?',
    // Entries strictly ahead of a key, as three index range counts. Params: countAheadParams.
    countAhead: `SELECT
        (SELECT COUNT(*) FROM ${ranked} WHERE space_id = ? AND sprint_id = ? AND points > ?)
      + (SELECT COUNT(*) FROM ${ranked} WHERE space_id = ? AND sprint_id = ? AND points = ? AND reached_at < ?)
      + (SELECT COUNT(*) FROM ${ranked} WHERE space_id = ? AND sprint_id = ? AND points = ? AND reached_at = ?
           AND address_key < ?) AS ahead`,
    // Params: keysetPageParams.
    pageAfter: keysetPageSql(ranked, 'after'),
    pageBefore: keysetPageSql(ranked, 'before'),
    // Every entry in rank order, for loading a rank index. Params: spaceId, sprintId.
    // No statement time limit: a board of millions streams for longer than any request may take.
    wholeBoard: dialect.untimed(
      `SELECT ${COLUMNS} FROM ${ranked} WHERE ${ON_BOARD} ORDER BY ${FORWARD}`,
    ),
    // The entries strictly before a key, and those from the key on, each in rank order: a board
    // read in two parts split at a key (an entry that does not change is in exactly one of them,
    // whatever is written between the two reads). Params: splitParams.
    boardBefore: `SELECT ${COLUMNS} FROM ${ranked} WHERE ${ON_BOARD} AND points >= ?
      AND (points > ? OR reached_at < ? OR (reached_at = ? AND address_key < ?)) ORDER BY ${FORWARD}`,
    boardFrom: `SELECT ${COLUMNS} FROM ${ranked} WHERE ${ON_BOARD} AND points <= ?
      AND (points < ? OR reached_at > ? OR (reached_at = ? AND address_key >= ?)) ORDER BY ${FORWARD}`,
    // An export's pages: a page as above, with each entry's profile. Params: spaceId, sprintId,
    // limit, and keysetPageParams.
    exportFirst: withProfiles(
      `SELECT ${COLUMNS} FROM ${ranked} WHERE ${ON_BOARD} ORDER BY ${FORWARD} LIMIT ?`,
    ),
    exportAfter: withProfiles(keysetPageSql(ranked, 'after')),
    // The board's entry count, and on SQLite whether board_entries may lack some of its changes
    // (see BoardBacklog). Params: spaceId, sprintId.
    boardState:
      'SELECT entry_count AS entryCount, unfolded_since AS unfoldedSince FROM boards WHERE space_id = ? AND sprint_id = ?',
  };
}

/** A page's entries with their profiles' address and username (null without a profile row). */
function withProfiles(page: string): string {
  return `SELECT b.addressKey, b.points, b.reachedAt, p.address, p.username
    FROM (${page}) AS b LEFT JOIN profiles p ON p.address_key = b.addressKey
    ORDER BY b.points DESC, b.reachedAt ASC, b.addressKey ASC`;
}

export function countAheadParams(board: BoardRef, key: RankKey): unknown[] {
  const b = [board.spaceId, board.sprintId];
  return [
    ...b,
    key.points,
    ...b,
    key.points,
    key.reachedAt,
    ...b,
    key.points,
    key.reachedAt,
    key.addressKey,
  ];
}

/**
 * The entries after (or before) a key: the keyset predicate as a UNION ALL of three range scans,
 * each an index range that stops after `limit` rows. SQLite turns the equivalent OR into a scan.
 */
function keysetPageSql(table: string, direction: 'after' | 'before'): string {
  const forward = direction === 'after';
  const [lt, gt] = forward ? ['<', '>'] : ['>', '<'];
  const order = forward ? FORWARD : BACKWARD;
  const reachedOrder = forward
    ? 'reached_at ASC, address_key ASC'
    : 'reached_at DESC, address_key DESC';
  const addressOrder = forward ? 'address_key ASC' : 'address_key DESC';
  const branch = (predicate: string, branchOrder: string, alias: string) =>
    `SELECT * FROM (SELECT ${COLUMNS} FROM ${table} WHERE ${ON_BOARD} AND ${predicate}
       ORDER BY ${branchOrder} LIMIT ?) AS ${alias}`;
  return `SELECT * FROM (
      ${branch(`points ${lt} ?`, order, 'lower_points')}
      UNION ALL ${branch(`points = ? AND reached_at ${gt} ?`, reachedOrder, 'later_reached')}
      UNION ALL ${branch(`points = ? AND reached_at = ? AND address_key ${gt} ?`, addressOrder, 'next_address')}
    ) AS page ORDER BY ${forward ? FORWARD_OUT : BACKWARD_OUT} LIMIT ?`;
}

/** The parameters of boardBefore and boardFrom for the split key `key`. */
export function splitParams(board: BoardRef, key: RankKey): unknown[] {
  return [
    board.spaceId,
    board.sprintId,
    key.points,
    key.points,
    key.reachedAt,
    key.reachedAt,
    key.addressKey,
  ];
}

export function keysetPageParams(board: BoardRef, key: RankKey, limit: number): unknown[] {
  const b = [board.spaceId, board.sprintId];
  return [
    ...[...b, key.points, limit],
    ...[...b, key.points, key.reachedAt, limit],
    ...[...b, key.points, key.reachedAt, key.addressKey, limit],
    limit,
  ];
}
