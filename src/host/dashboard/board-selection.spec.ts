import {
  afterOffsetOf,
  boardSelection,
  pageCountOf,
  pageOfRank,
  pageOutOfRange,
  rankOutOfRange,
} from './board-selection';

describe('boardSelection', () => {
  it('reads an address first, then a rank, then a page; none is the first page', () => {
    expect(boardSelection({})).toEqual({ kind: 'page', page: 1 });
    expect(boardSelection({ page: '3', sprint: '2' })).toEqual({ kind: 'page', page: 3 });
    expect(boardSelection({ rank: '1,200' })).toEqual({ kind: 'rank', rank: 1200 });
    expect(boardSelection({ rank: ' 77 ', page: '9' })).toEqual({ kind: 'rank', rank: 77 });
    expect(boardSelection({ address: ' 0xAbC ', rank: '5', page: '2' })).toEqual({
      kind: 'address',
      address: '0xAbC',
      page: 2,
    });
    // A blank search box is no search.
    expect(boardSelection({ address: '  ', page: '2' })).toEqual({ kind: 'page', page: 2 });
  });

  it('says why a page or a rank cannot be read', () => {
    for (const page of ['0', '-1', 'two', '1.5', '9'.repeat(16)])
      expect(boardSelection({ page })).toEqual({
        error: 'The page must be a whole number from 1. Showing the first page.',
      });
    for (const rank of ['', 'x', '-3', '2.5'])
      expect(boardSelection({ rank })).toEqual({
        error: 'Enter the rank as a whole number, such as 1200. Showing the first page.',
      });
    // A repeated parameter is not a number.
    expect(boardSelection({ page: ['1', '2'] })).toEqual({ kind: 'page', page: 1 });
  });
});

describe('board pages', () => {
  it('places ranks on 50-entry pages, read by the offset of the entry before them', () => {
    expect([1, 50, 51, 99_823].map(pageOfRank)).toEqual([1, 1, 2, 1997]);
    expect([0, 1, 50, 51, 99_823].map(pageCountOf)).toEqual([1, 1, 1, 2, 1997]);
    expect([1, 2, 1997].map(afterOffsetOf)).toEqual(['-1', '49', '99799']);
  });

  it('refuses ranks and pages off the board with the range that exists', () => {
    expect(rankOutOfRange(1, 99_823)).toBeUndefined();
    expect(rankOutOfRange(99_823, 99_823)).toBeUndefined();
    expect(rankOutOfRange(99_824, 99_823)).toBe(
      'There is no rank 99,824 on this board: its ranks go from 1 to 99,823. Showing the first page.',
    );
    expect(rankOutOfRange(0, 10)).toMatch(/^There is no rank 0 on this board/);
    expect(rankOutOfRange(1, 0)).toBe(
      'This board has no entries yet, so there is no rank to go to.',
    );
    expect(pageOutOfRange(1, 0)).toBeUndefined();
    expect(pageOutOfRange(1997, 99_823)).toBeUndefined();
    expect(pageOutOfRange(2000, 99_823)).toBe(
      'There is no page 2,000: this board has 1,997 pages. Showing the first page.',
    );
    // Far past the last page: the same refusal, whatever offset it would have been.
    expect(pageOutOfRange(100_000_000_000_000, 130)).toBe(
      'There is no page 100,000,000,000,000: this board has 3 pages. Showing the first page.',
    );
    expect(pageOutOfRange(2, 50)).toBe(
      'There is no page 2: this board has 1 page. Showing the first page.',
    );
  });
});
