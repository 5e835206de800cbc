import fc from 'fast-check';
import { bucketEdges, MAX_BUCKETS } from './board-distributions';

describe('bucketEdges', () => {
  it('uses the 1-2-5 series for points spanning two decades or more, round steps otherwise', () => {
    expect(bucketEdges(5, 800)).toEqual({ scale: 'log', edges: [5, 10, 20, 50, 100, 200, 500] });
    expect(bucketEdges(12, 15_000)).toEqual({
      scale: 'log',
      edges: [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000],
    });
    expect(bucketEdges(99_097, 100_000)).toEqual({
      scale: 'linear',
      edges: [
        99_000, 99_100, 99_200, 99_300, 99_400, 99_500, 99_600, 99_700, 99_800, 99_900, 100_000,
      ],
    });
    expect(bucketEdges(1, 7)).toEqual({ scale: 'linear', edges: [1, 2, 3, 4, 5, 6, 7] });
    expect(bucketEdges(4, 4)).toEqual({ scale: 'linear', edges: [4] });
  });

  it('falls back to decades when the 1-2-5 series would draw too many bars', () => {
    expect(bucketEdges(1, 2_147_483_647)).toEqual({
      scale: 'log',
      edges: [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000],
    });
  });

  it('covers every total from min to max in at most MAX_BUCKETS increasing buckets', () => {
    const totals = fc
      .tuple(fc.integer({ min: 1, max: 2_147_483_647 }), fc.integer({ min: 1, max: 2_147_483_647 }))
      .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
    fc.assert(
      fc.property(totals, ([min, max]) => {
        const { edges } = bucketEdges(min, max);
        expect(edges.length).toBeGreaterThanOrEqual(1);
        expect(edges.length).toBeLessThanOrEqual(MAX_BUCKETS);
        expect(edges[0]).toBeGreaterThanOrEqual(1);
        expect(edges[0]).toBeLessThanOrEqual(min);
        expect(edges[edges.length - 1]).toBeLessThanOrEqual(max);
        for (let i = 1; i < edges.length; i++) expect(edges[i]).toBeGreaterThan(edges[i - 1]);
        // The last bucket ends at max: no total above the first edge falls outside them.
        expect(edges.every(Number.isSafeInteger)).toBe(true);
      }),
    );
  });
});
