import type { ThrottlerStorage } from '@nestjs/throttler';
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/*
 * A sliding-window log per key and window, kept in a sorted set scored by each hit's expiry.
 * One Lua script prunes, counts and adds atomically on the server, with the server's clock, so
 * instances sharing a Redis share one budget with no get-then-set race and no clock skew. A
 * refused request adds no hit, as in @nestjs/throttler's own in-memory storage.
 */
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {count + 1, 1, tonumber(oldest[2]) - now}
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return {count + 1, 0, ttl}
`;

/** Takes back the newest hit still counted (a refunded spend), atomically: 1 if there was one. */
const RELEASE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZREMRANGEBYRANK', KEYS[1], -1, -1)
`;

/** @nestjs/throttler's storage contract on Redis (blockDuration is not used: windows slide). */
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'loyalty:rl:',
  ) {
    this.redis.defineCommand('loyaltySlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    this.redis.defineCommand('loyaltyRelease', { numberOfKeys: 1, lua: RELEASE });
  }

  /** Whether the connection is up now: false from the start when Redis never answered. */
  isConnected(): boolean {
    return this.redis.status === 'ready';
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const command = (
      this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number[]>>
    ).loyaltySlidingWindow;
    const [totalHits, blocked, msLeft] = await command.call(
      this.redis,
      `${this.prefix}${throttlerName}:${key}`,
      ttl,
      limit,
      randomUUID(),
    );
    const seconds = Math.max(1, Math.ceil(msLeft / 1000));
    return {
      totalHits,
      timeToExpire: seconds,
      isBlocked: blocked === 1,
      timeToBlockExpire: blocked === 1 ? seconds : 0,
    };
  }

  /** Gives back one hit of the window `increment` counted under the same key and name. */
  async release(key: string, throttlerName: string): Promise<boolean> {
    const command = (
      this.redis as unknown as Record<string, (...args: unknown[]) => Promise<number>>
    ).loyaltyRelease;
    return (await command.call(this.redis, `${this.prefix}${throttlerName}:${key}`)) === 1;
  }
}
