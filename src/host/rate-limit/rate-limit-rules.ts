/** One window of a rate limit: at most `limit` requests in any `ttlMs` (a sliding window). */
export interface RateLimitRule {
  name: string;
  limit: number;
  ttlMs: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const RULE = /^(\d+)\/(\d+)(ms|s|m|h)$/;

/**
 * Reads a limit such as `20/1s,300/30s` (a burst of 20 in any second, and 10 a second on
 * average over 30 s). `off` disables it. Throws with a message naming the setting.
 */
export function parseRateLimitRules(setting: string, value: string): RateLimitRule[] {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === 'off') return [];
  const rules = trimmed.split(',').map((part) => {
    const match = RULE.exec(part.trim());
    const limit = match ? Number(match[1]) : 0;
    const ttlMs = match ? Number(match[2]) * UNITS[match[3]] : 0;
    if (!match || limit < 1 || ttlMs < 1 || ttlMs > 86_400_000) {
      throw new Error(
        `${setting} must be "off" or windows like "20/1s,300/30s" (requests/duration in ms, s, m or h, up to 24h); got "${value}"`,
      );
    }
    return { name: `${limit}/${match[2]}${match[3]}`, limit, ttlMs };
  });
  if (rules.length === 0) throw new Error(`${setting} has no windows`);
  return rules;
}
