import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PagingArgs, toPageRequest } from './page-request';
import type { RankKey } from '../ranking/ranking';

const KEY_A: RankKey = { points: 100, reachedAt: 1000, addressKey: 'alice' };
const KEY_B: RankKey = { points: 50, reachedAt: 2000, addressKey: 'bob' };

/** A decoder that knows exactly two cursors and records what it was asked. */
function fakeDecoder() {
  const calls: string[] = [];
  const decode = (cursor: string): RankKey | null => {
    calls.push(cursor);
    if (cursor === 'cursor-a') return KEY_A;
    if (cursor === 'cursor-b') return KEY_B;
    if (cursor === '5') return KEY_B; // a cursor that happens to look like a number
    return null;
  };
  return { decode, calls };
}

function catchError(fn: () => unknown): LoyaltyException {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(LoyaltyException);
    return error as LoyaltyException;
  }
  throw new Error('expected a LoyaltyException, nothing was thrown');
}

function request(args: PagingArgs) {
  return toPageRequest(args, fakeDecoder().decode);
}

describe('toPageRequest', () => {
  describe('page size', () => {
    it('defaults to 50', () => {
      expect(DEFAULT_PAGE_SIZE).toBe(50);
      expect(request({})).toEqual({ size: 50, kind: 'first' });
      expect(request({ first: null })).toEqual({ size: 50, kind: 'first' });
      expect(request({ first: undefined })).toEqual({ size: 50, kind: 'first' });
    });

    it.each([1, 2, 50, 999, 1000])('honours first = %d', (first) => {
      expect(request({ first })).toEqual({ size: first, kind: 'first' });
    });

    it.each([1001, 5000, 2_147_483_647])('serves first = %d as 1000', (first) => {
      expect(MAX_PAGE_SIZE).toBe(1000);
      expect(request({ first }).size).toBe(1000);
    });

    it.each([0, -1, -1000])(
      'refuses first = %d with INVALID_ARGUMENT "Invalid page size"',
      (first) => {
        const error = catchError(() => request({ first }));
        expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
        expect(error.message).toBe('Invalid page size');
        expect(error.extensions).toEqual({
          code: 'INVALID_ARGUMENT',
          category: 'VALIDATION',
          http_status: 200,
        });
      },
    );

    it('applies the size to every kind of page', () => {
      expect(request({ first: 7, cursorAfter: 'cursor-a' }).size).toBe(7);
      expect(request({ first: 7, cursorBefore: 'cursor-a' }).size).toBe(7);
      expect(request({ first: 7, after: '3' }).size).toBe(7);
      expect(request({ first: 2000, after: '3' }).size).toBe(1000);
    });

    it('checks the page size even when the cursor is fine', () => {
      expect(catchError(() => request({ first: 0, cursorAfter: 'cursor-a' })).message).toBe(
        'Invalid page size',
      );
    });
  });

  describe('first page', () => {
    it.each([
      ['null', null],
      ['undefined', undefined],
      ['empty', ''],
    ])('treats cursorAfter %s as the first page', (_label, cursorAfter) => {
      const { decode, calls } = fakeDecoder();
      expect(toPageRequest({ cursorAfter }, decode)).toEqual({ size: 50, kind: 'first' });
      expect(calls).toEqual([]);
    });

    it('treats after "" and cursorBefore "" as absent', () => {
      expect(request({ after: '', cursorBefore: '' })).toEqual({ size: 50, kind: 'first' });
      expect(request({ cursorAfter: '', after: '', cursorBefore: '' })).toEqual({
        size: 50,
        kind: 'first',
      });
      expect(request({ cursorAfter: null, after: null, cursorBefore: null })).toEqual({
        size: 50,
        kind: 'first',
      });
    });
  });

  describe('cursors', () => {
    it('pages after a cursorAfter', () => {
      expect(request({ cursorAfter: 'cursor-a' })).toEqual({ size: 50, kind: 'after', key: KEY_A });
    });

    it('pages before a cursorBefore', () => {
      expect(request({ cursorBefore: 'cursor-b' })).toEqual({
        size: 50,
        kind: 'before',
        key: KEY_B,
      });
    });

    it('lets cursorAfter win over after', () => {
      const { decode, calls } = fakeDecoder();
      expect(toPageRequest({ cursorAfter: 'cursor-a', after: 'cursor-b' }, decode)).toEqual({
        size: 50,
        kind: 'after',
        key: KEY_A,
      });
      expect(calls).toEqual(['cursor-a']);
      expect(request({ cursorAfter: 'cursor-a', after: '3' })).toEqual({
        size: 50,
        kind: 'after',
        key: KEY_A,
      });
    });

    it('uses after when cursorAfter is empty', () => {
      expect(request({ cursorAfter: '', after: 'cursor-b' })).toEqual({
        size: 50,
        kind: 'after',
        key: KEY_B,
      });
      expect(request({ cursorAfter: null, after: '4' })).toEqual({
        size: 50,
        kind: 'offset',
        skip: 5,
      });
    });

    it('pages after an endCursor passed as the deprecated after', () => {
      expect(request({ after: 'cursor-a' })).toEqual({ size: 50, kind: 'after', key: KEY_A });
    });

    it.each([
      ['cursorAfter', { cursorAfter: 'cursor-a', cursorBefore: 'cursor-b' }],
      ['after (cursor)', { after: 'cursor-a', cursorBefore: 'cursor-b' }],
      ['after (offset)', { after: '3', cursorBefore: 'cursor-b' }],
      ['after "-1"', { after: '-1', cursorBefore: 'cursor-b' }],
      [
        'cursorAfter and after',
        { cursorAfter: 'cursor-a', after: 'cursor-a', cursorBefore: 'cursor-b' },
      ],
      ['an undecodable cursorAfter', { cursorAfter: 'junk', cursorBefore: 'junk' }],
    ])('refuses %s together with cursorBefore as INVALID_ARGUMENT', (_label, args) => {
      const error = catchError(() => request(args));
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.extensions.category).toBe('VALIDATION');
    });

    it.each([
      ['cursorAfter', { cursorAfter: 'junk' }],
      ['cursorBefore', { cursorBefore: 'junk' }],
      ['after', { after: 'junk' }],
      ['after with cursorAfter empty', { cursorAfter: '', after: 'not-a-cursor' }],
    ])('refuses a %s the decoder rejects as INVALID_CURSOR "Invalid cursor"', (_label, args) => {
      const error = catchError(() => request(args));
      expect(error.code).toBe(ErrorCode.INVALID_CURSOR);
      expect(error.message).toBe('Invalid cursor');
    });

    it('passes the cursor text to the decoder unchanged', () => {
      const { decode, calls } = fakeDecoder();
      toPageRequest({ cursorBefore: 'cursor-b' }, decode);
      expect(() => toPageRequest({ cursorAfter: ' spaced ' }, decode)).toThrow(LoyaltyException);
      expect(calls).toEqual(['cursor-b', ' spaced ']);
    });
  });

  describe('deprecated after offsets', () => {
    it('"-1" means the first page', () => {
      const { decode, calls } = fakeDecoder();
      expect(toPageRequest({ after: '-1' }, decode)).toEqual({ size: 50, kind: 'first' });
      expect(calls).toEqual([]);
    });

    it.each([
      ['0', 1],
      ['9', 10],
      ['49', 50],
      ['007', 8],
      ['999999999999999', 1_000_000_000_000_000],
    ])('"%s" skips %d entries', (after, skip) => {
      const { decode, calls } = fakeDecoder();
      expect(toPageRequest({ after }, decode)).toEqual({ size: 50, kind: 'offset', skip });
      expect(calls).toEqual([]);
    });

    it.each(['-2', '-100'])('"%s" is INVALID_CURSOR', (after) => {
      expect(catchError(() => request({ after })).code).toBe(ErrorCode.INVALID_CURSOR);
    });

    it.each(['1.5', '1e3', '+3', ' 3', '0x10', 'abc', '9999999999999999'])(
      'a non-offset after "%s" goes to the decoder as a cursor',
      (after) => {
        const { decode, calls } = fakeDecoder();
        expect(catchError(() => toPageRequest({ after }, decode)).code).toBe(
          ErrorCode.INVALID_CURSOR,
        );
        expect(calls).toEqual([after]);
      },
    );

    it('treats a numeric-looking cursorAfter as a cursor, not an offset', () => {
      const { decode, calls } = fakeDecoder();
      expect(toPageRequest({ cursorAfter: '5' }, decode)).toEqual({
        size: 50,
        kind: 'after',
        key: KEY_B,
      });
      expect(calls).toEqual(['5']);
      expect(catchError(() => request({ cursorAfter: '3' })).code).toBe(ErrorCode.INVALID_CURSOR);
      expect(catchError(() => request({ cursorAfter: '-1' })).code).toBe(ErrorCode.INVALID_CURSOR);
    });

    it('treats a numeric-looking cursorBefore as a cursor', () => {
      expect(catchError(() => request({ cursorBefore: '3' })).code).toBe(ErrorCode.INVALID_CURSOR);
      expect(request({ cursorBefore: '5' })).toEqual({ size: 50, kind: 'before', key: KEY_B });
    });
  });
});
