import { param } from './form-fields';
import { BOARD_PAGE_SIZE, count } from './views/board-format';

export { BOARD_PAGE_SIZE };

/**
 * Which page of a board the space page shows, from its query string (each keeps `sprint`):
 * - `?address=A`: the page holding address A, its row highlighted (else `page`, with a notice);
 * - `?rank=N`: the page holding rank N, that row highlighted ("Go to rank");
 * - `?page=P`: page P, 1-based, of {@link BOARD_PAGE_SIZE} entries (the pager's links);
 * - none of them: the first page.
 * Pages are read by rank offset, so any page costs the same (see LeaderboardsService.getPage).
 */
export type BoardSelection =
  | { kind: 'address'; address: string; page: number }
  | { kind: 'rank'; rank: number }
  | { kind: 'page'; page: number };

/** A whole number as people type it (1,200 or 1 200 too); undefined for anything else. */
function wholeNumber(text: string): number | undefined {
  const digits = text.trim().replace(/[,\s_]/g, '');
  return /^\d{1,15}$/.test(digits) ? Number(digits) : undefined;
}

/** The selection `query` asks for, or the message that says why it cannot be read. */
export function boardSelection(query: Record<string, unknown>): BoardSelection | { error: string } {
  const pageText = param(query.page);
  let page = 1;
  if (pageText !== undefined && pageText.trim() !== '') {
    const parsed = wholeNumber(pageText);
    if (parsed === undefined || parsed < 1)
      return { error: 'The page must be a whole number from 1. Showing the first page.' };
    page = parsed;
  }
  const address = (param(query.address) ?? '').trim();
  if (address) return { kind: 'address', address, page };
  const rankText = param(query.rank);
  if (rankText !== undefined) {
    const rank = wholeNumber(rankText);
    if (rank === undefined)
      return { error: 'Enter the rank as a whole number, such as 1200. Showing the first page.' };
    return { kind: 'rank', rank };
  }
  return { kind: 'page', page };
}

/** The 1-based page that holds `rank`. */
export const pageOfRank = (rank: number): number => Math.ceil(rank / BOARD_PAGE_SIZE);

/** A board's pages: one at least, so that an empty board still has a first page. */
export const pageCountOf = (total: number): number =>
  Math.max(1, Math.ceil(total / BOARD_PAGE_SIZE));

/**
 * The deprecated `after` offset of the page (docs/api.md, Paging): the 0-based index of the last
 * entry before it, "-1" for the first page.
 */
export const afterOffsetOf = (page: number): string => String((page - 1) * BOARD_PAGE_SIZE - 1);

/** Why a rank cannot be shown: none on an empty board, or outside 1..total. */
export function rankOutOfRange(rank: number, total: number): string | undefined {
  if (total === 0) return 'This board has no entries yet, so there is no rank to go to.';
  if (rank >= 1 && rank <= total) return undefined;
  return `There is no rank ${count(rank)} on this board: its ranks go from 1 to ${count(total)}. Showing the first page.`;
}

/** Why a page cannot be shown: past the last one. */
export function pageOutOfRange(page: number, total: number): string | undefined {
  const pages = pageCountOf(total);
  if (page <= pages) return undefined;
  return `There is no page ${count(page)}: this board has ${count(pages)} page${pages === 1 ? '' : 's'}. Showing the first page.`;
}
