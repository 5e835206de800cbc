import { ALL_TIME_SPRINT_ID, RankKey, compareRankKeys } from './ranking';
import { seededRandom } from '../../common/seeded-random';

/** Reference: compares strings UTF-16 code unit by code unit, shorter prefix first. */
function compareCodeUnits(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Reference order of docs/api.md (Ranking): points desc, reachedAt asc, addressKey asc (code units). */
function referenceSort(keys: RankKey[]): RankKey[] {
  // Bucket by points and reachedAt to avoid relying on subtraction, then order the buckets.
  return [...keys].sort((a, b) => {
    if (a.points > b.points) return -1;
    if (a.points < b.points) return 1;
    if (a.reachedAt < b.reachedAt) return -1;
    if (a.reachedAt > b.reachedAt) return 1;
    return compareCodeUnits(a.addressKey, b.addressKey);
  });
}

const sign = (n: number) => Math.sign(n) || 0;

describe('compareRankKeys', () => {
  it('ranks more points first, whatever the time and address', () => {
    const rich = { points: 100, reachedAt: 9_000, addressKey: 'zzz' };
    const poor = { points: 99, reachedAt: 1, addressKey: 'aaa' };
    expect(compareRankKeys(rich, poor)).toBeLessThan(0);
    expect(compareRankKeys(poor, rich)).toBeGreaterThan(0);
  });

  it('orders negative and zero points below positive ones', () => {
    expect(
      compareRankKeys(
        { points: 0, reachedAt: 0, addressKey: 'a' },
        { points: -1, reachedAt: 0, addressKey: 'a' },
      ),
    ).toBeLessThan(0);
    expect(
      compareRankKeys(
        { points: 1, reachedAt: 5, addressKey: 'b' },
        { points: 0, reachedAt: 0, addressKey: 'a' },
      ),
    ).toBeLessThan(0);
  });

  it('on equal points, ranks the earlier reachedAt first, whatever the address', () => {
    const early = { points: 10, reachedAt: 1_000, addressKey: 'zzz' };
    const late = { points: 10, reachedAt: 1_001, addressKey: 'aaa' };
    expect(compareRankKeys(early, late)).toBeLessThan(0);
    expect(compareRankKeys(late, early)).toBeGreaterThan(0);
  });

  it('on equal points and time, ranks the lower address first', () => {
    const a = { points: 10, reachedAt: 1_000, addressKey: '0xaaa' };
    const b = { points: 10, reachedAt: 1_000, addressKey: '0xaab' };
    expect(compareRankKeys(a, b)).toBeLessThan(0);
    expect(compareRankKeys(b, a)).toBeGreaterThan(0);
  });

  it('ranks a prefix before its extensions', () => {
    const short = { points: 1, reachedAt: 1, addressKey: 'ab' };
    const long = { points: 1, reachedAt: 1, addressKey: 'abc' };
    expect(compareRankKeys(short, long)).toBeLessThan(0);
  });

  it('returns 0 only for equal keys', () => {
    const key = { points: 5, reachedAt: 5, addressKey: 'x' };
    expect(compareRankKeys(key, { ...key })).toBe(0);
    expect(compareRankKeys(key, { ...key, addressKey: 'X' })).not.toBe(0);
  });

  it('compares addresses by UTF-16 code unit, not by locale or code point', () => {
    const at = (addressKey: string) => ({ points: 1, reachedAt: 1, addressKey });
    // Code units: 'Z' (0x5a) < '_' (0x5f) < 'a' (0x61); a locale compare would put '_' first or 'a' before 'Z'.
    expect(compareRankKeys(at('Z'), at('a'))).toBeLessThan(0);
    expect(compareRankKeys(at('Z'), at('_'))).toBeLessThan(0);
    expect(compareRankKeys(at('_'), at('a'))).toBeLessThan(0);
    // 'é' (0xe9) sorts after every ASCII letter.
    expect(compareRankKeys(at('z'), at('é'))).toBeLessThan(0);
    // U+1F600 is the surrogate pair D83D DE00: by code unit it sorts before U+FFFF (by code point it would not).
    expect(compareRankKeys(at('\u{1F600}'), at('\uFFFF'))).toBeLessThan(0);
  });

  it('handles points beyond 32 bits without overflow', () => {
    const big = { points: 2 ** 52, reachedAt: 0, addressKey: 'a' };
    const neg = { points: -(2 ** 52), reachedAt: 0, addressKey: 'a' };
    expect(compareRankKeys(big, neg)).toBeLessThan(0);
    expect(compareRankKeys(neg, big)).toBeGreaterThan(0);
  });

  it('is antisymmetric and agrees with the reference on random pairs (seeded)', () => {
    const rand = seededRandom(99);
    const alphabet = ['a', 'b', 'A', '_', '0', 'é', '\u{1F600}', '\uFFFF'];
    const randomKey = (): RankKey => ({
      points: Math.floor(rand() * 5) - 1,
      reachedAt: Math.floor(rand() * 4),
      addressKey: Array.from(
        { length: Math.floor(rand() * 4) },
        () => alphabet[Math.floor(rand() * alphabet.length)],
      ).join(''),
    });
    for (let i = 0; i < 5000; i++) {
      const a = randomKey();
      const b = randomKey();
      const expected = referenceSort([a, b]);
      const got = sign(compareRankKeys(a, b));
      expect(sign(compareRankKeys(b, a))).toBe(-got || 0);
      if (got !== 0) expect([a, b].sort(compareRankKeys)).toEqual(expected);
      else expect(a).toEqual(b);
    }
  });

  it('sorts random boards in the same order as the reference sort (seeded)', () => {
    const rand = seededRandom(12345);
    const alphabet = 'abcxyzABC_09é😀';
    for (let round = 0; round < 50; round++) {
      const keys: RankKey[] = [];
      const count = 1 + Math.floor(rand() * 200);
      for (let i = 0; i < count; i++) {
        keys.push({
          // Few distinct values so ties on points and on time happen often.
          points: Math.floor(rand() * 6) * (rand() < 0.5 ? 1 : 1_000_000_000),
          reachedAt: 1_767_225_600_000 + Math.floor(rand() * 3) * 1000,
          addressKey: Array.from(
            { length: 1 + Math.floor(rand() * 3) },
            () => alphabet[Math.floor(rand() * alphabet.length)],
          ).join(''),
        });
      }
      // Shuffle-independent: sorting any permutation gives the same order.
      const shuffled = [...keys].sort(() => rand() - 0.5);
      const expected = referenceSort(keys);
      expect([...keys].sort(compareRankKeys)).toEqual(expected);
      expect(shuffled.sort(compareRankKeys)).toEqual(expected);
    }
  });
});

describe('ALL_TIME_SPRINT_ID', () => {
  it('is 0', () => {
    expect(ALL_TIME_SPRINT_ID).toBe(0);
  });
});
