import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { RankKey } from '../ranking/ranking';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** Where a page starts, in the terms the board reader understands. */
export type PageRequest = { size: number } & (
  | { kind: 'first' }
  | { kind: 'after'; key: RankKey }
  | { kind: 'before'; key: RankKey }
  /** Deprecated `after` offsets: skip this many entries. */
  | { kind: 'offset'; skip: number }
);

export interface PagingArgs {
  cursorAfter?: string | null;
  cursorBefore?: string | null;
  first?: number | null;
  after?: string | null;
}

const OFFSET_PATTERN = /^-?\d{1,15}$/;

function present(value: string | null | undefined): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Turns the leaderboard arguments into a page request, with the edge rules of docs/api.md
 * (Paging). `decode` reads a cursor of this board, or returns null for anything else.
 */
export function toPageRequest(
  args: PagingArgs,
  decode: (cursor: string) => RankKey | null,
): PageRequest {
  const size = pageSizeOf(args.first);
  const after = present(args.cursorAfter)
    ? args.cursorAfter
    : present(args.after)
      ? args.after
      : null;
  const before = present(args.cursorBefore) ? args.cursorBefore : null;
  if (after !== null && before !== null) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'cursorAfter (or after) and cursorBefore cannot be used together',
    );
  }
  if (before !== null) return { size, kind: 'before', key: decodeOrThrow(before, decode) };
  if (after === null) return { size, kind: 'first' };
  if (!present(args.cursorAfter) && OFFSET_PATTERN.test(after)) {
    const lastSeen = Number(after);
    if (lastSeen < -1) throw new LoyaltyException(ErrorCode.INVALID_CURSOR);
    return lastSeen === -1 ? { size, kind: 'first' } : { size, kind: 'offset', skip: lastSeen + 1 };
  }
  return { size, kind: 'after', key: decodeOrThrow(after, decode) };
}

function pageSizeOf(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_PAGE_SIZE;
  if (first < 1) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Invalid page size');
  return Math.min(first, MAX_PAGE_SIZE);
}

function decodeOrThrow(cursor: string, decode: (cursor: string) => RankKey | null): RankKey {
  const key = decode(cursor);
  if (!key) throw new LoyaltyException(ErrorCode.INVALID_CURSOR);
  return key;
}
