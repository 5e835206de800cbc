import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { performance } from 'node:perf_hooks';
import { LocalSlidingWindows } from './local-sliding-windows';
import type { RateLimitRule } from './rate-limit-rules';

/** The shared (Redis) storage, when REDIS_URL is set. */
export const SHARED_RATE_LIMIT_STORAGE = Symbol('SHARED_RATE_LIMIT_STORAGE');

/** @nestjs/throttler's storage contract, and a refund of one spend (RedisThrottlerStorage). */
export interface SharedRateLimitStorage extends ThrottlerStorage {
  release(key: string, throttlerName: string): Promise<boolean>;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The window with the least room left, for the RateLimit-* headers. */
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** Whole seconds until a refused request may be retried. */
  retryAfterSeconds: number;
  policy: string;
}

/**
 * Counts requests against sliding windows in @nestjs/throttler's storage, shared through Redis when
 * configured. With Redis unreachable each instance falls back to its own windows (local limits,
 * not none), logs the outage and its end once, and `degraded` says so; nothing is refused for it.
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly local = new LocalSlidingWindows();
  /** The RateLimit-Policy text of each rule list, built once: rule lists live as long as the app. */
  private readonly policies = new WeakMap<readonly RateLimitRule[], string>();
  private degradedSince: number | null = null;
  /** Keys whose last spend was refused, until when: checked without a trip to the store. */
  private readonly blocked = new Map<string, number>();

  constructor(
    @Optional() @Inject(SHARED_RATE_LIMIT_STORAGE) private readonly shared?: SharedRateLimitStorage,
  ) {}

  get degraded(): boolean {
    return this.degradedSince !== null;
  }

  /**
   * For readiness: 'shared' (Redis), 'local' (no Redis configured), or 'degraded' (Redis down:
   * a spend failed, or the store has no connection, as when Redis was unreachable from the start).
   */
  get storeState(): 'shared' | 'local' | 'degraded' {
    if (!this.shared) return 'local';
    const connected = (this.shared as { isConnected?: () => boolean }).isConnected?.() ?? true;
    return this.degraded || !connected ? 'degraded' : 'shared';
  }

  /** Spends one request from every window of `rules` for `key`; null when there are none. */
  async consume(key: string, rules: readonly RateLimitRule[]): Promise<RateLimitDecision | null> {
    if (rules.length === 0) return null;
    const policy = this.policyOf(rules);
    let tightest: RateLimitDecision | null = null;
    for (const rule of rules) {
      const record = await this.increment(key, rule);
      const decision: RateLimitDecision = {
        allowed: !record.isBlocked,
        limit: rule.limit,
        remaining: record.isBlocked ? 0 : Math.max(0, rule.limit - record.totalHits),
        resetSeconds: Math.max(1, record.timeToExpire),
        retryAfterSeconds: record.isBlocked ? Math.max(1, record.timeToBlockExpire) : 0,
        policy,
      };
      if (!decision.allowed) {
        if (this.blocked.size > 100_000) this.blocked.clear();
        this.blocked.set(key, performance.now() + decision.retryAfterSeconds * 1000);
        return decision;
      }
      if (!tightest || decision.remaining < tightest.remaining) tightest = decision;
    }
    return tightest;
  }

  /**
   * Gives back the request `consume` last spent on `key` in every window of `rules` (the newest hit
   * of each, removed atomically by the store): for a spend made before knowing whether it counts,
   * such as a sign-in attempt's failure before its password is checked. Never below zero.
   */
  async release(key: string, rules: readonly RateLimitRule[]): Promise<void> {
    for (const rule of rules) {
      if (this.shared) {
        try {
          await this.shared.release(key, rule.name);
          continue;
        } catch {
          // Redis away: a spend made meanwhile was counted here (see increment). One Redis counted
          // before it went away stays spent, which errs on the safe side.
        }
      }
      this.local.release(`${key}\u0000${rule.name}`);
    }
    this.blocked.delete(key);
  }

  /**
   * Seconds until `key` may spend again when its last spend here was refused, else 0. Spends
   * nothing and asks no store: callers use it to refuse before doing costly work (a token lookup,
   * a password hash). Per instance; the shared budget still decides at the next spend.
   */
  blockedFor(key: string): number {
    const until = this.blocked.get(key);
    if (until === undefined) return 0;
    const left = until - performance.now();
    if (left <= 0) {
      this.blocked.delete(key);
      return 0;
    }
    return Math.ceil(left / 1000);
  }

  async onApplicationShutdown(): Promise<void> {
    this.local.close();
    await (this.shared as { close?: () => Promise<void> } | undefined)?.close?.();
  }

  private policyOf(rules: readonly RateLimitRule[]): string {
    let policy = this.policies.get(rules);
    if (policy === undefined) {
      policy = rules.map((r) => `${r.limit};w=${Math.ceil(r.ttlMs / 1000)}`).join(', ');
      this.policies.set(rules, policy);
    }
    return policy;
  }

  private async increment(key: string, rule: RateLimitRule) {
    if (this.shared) {
      try {
        const record = await this.shared.increment(key, rule.ttlMs, rule.limit, 0, rule.name);
        if (this.degradedSince !== null) {
          this.logger.log(
            `Shared rate-limit store is back after ${Date.now() - this.degradedSince} ms`,
          );
          this.degradedSince = null;
        }
        return record;
      } catch (error) {
        if (this.degradedSince === null) {
          this.degradedSince = Date.now();
          this.logger.warn(
            `Shared rate-limit store unreachable (${(error as Error).message}); limiting per instance until it returns`,
          );
        }
      }
    }
    // One record per window: the in-memory store keeps one expiry per key.
    return this.local.increment(`${key}\u0000${rule.name}`, rule.ttlMs, rule.limit);
  }
}
