/**
 * A brute-force leaderboard computed from the raw points records, straight from docs/api.md:
 * sum per lower-cased address; entries above 0; points desc, latest occurredAt asc, address asc.
 */
export interface PointsFixture {
  key: string;
  spaceId: number;
  address: string;
  points: number;
  occurredAt: string;
}

export interface ExpectedEntry {
  rank: number;
  addressKey: string;
  points: number;
}

export function bruteForceBoard(
  events: PointsFixture[],
  spaceId: number,
  window?: { start: string; end: string },
): ExpectedEntry[] {
  const totals = new Map<string, { points: number; latest: number }>();
  const seen = new Set<string>();
  for (const event of events) {
    if (event.spaceId !== spaceId || seen.has(event.key)) continue;
    seen.add(event.key);
    const at = Date.parse(event.occurredAt);
    if (window && !(Date.parse(window.start) <= at && at < Date.parse(window.end))) continue;
    const key = event.address.toLowerCase();
    const total = totals.get(key) ?? { points: 0, latest: -Infinity };
    total.points += event.points;
    total.latest = Math.max(total.latest, at);
    totals.set(key, total);
  }
  return [...totals]
    .filter(([, t]) => t.points > 0)
    .sort(
      ([a, ta], [b, tb]) =>
        tb.points - ta.points || ta.latest - tb.latest || (a < b ? -1 : a > b ? 1 : 0),
    )
    .map(([addressKey, t], i) => ({ rank: i + 1, addressKey, points: t.points }));
}

/** Deterministic PRNG for fixtures. */
export { seededRandom as seeded } from '../../src/common/seeded-random';
