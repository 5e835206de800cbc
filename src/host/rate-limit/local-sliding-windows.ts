import type { ThrottlerStorage } from '@nestjs/throttler';
import { performance } from 'node:perf_hooks';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Idle windows are dropped this often. */
const SWEEP_INTERVAL_MS = 60_000;
/** A log's spent head is cut off once it is this long and at least half of the log. */
const COMPACT_AT = 1_024;

interface Window {
  /** The expiry of every hit still counted, oldest first; entries before `head` are spent. */
  hits: number[];
  head: number;
  /** The countdown reported as `timeToExpire`, restarted whenever it has run out. */
  expiresAt: number;
}

/**
 * A sliding-window log per key in this process, answering as @nestjs/throttler's
 * ThrottlerStorageService does without a block duration (our only use). That one filters a key's
 * whole log on every call; here hits expire in insertion order and drop off the head, constant
 * work per request. Monotonic time: a wall clock stepped back would hold every key's hits.
 */
export class LocalSlidingWindows {
  private readonly windows = new Map<string, Window>();
  private sweeper?: NodeJS.Timeout;

  /** `key` names one window: one log and one countdown (callers append the rule's name). */
  increment(key: string, ttlMs: number, limit: number): ThrottlerStorageRecord {
    const now = performance.now();
    let window = this.windows.get(key);
    if (!window) {
      window = { hits: [], head: 0, expiresAt: now + ttlMs };
      this.windows.set(key, window);
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
    }
    const hits = window.hits;
    let head = window.head;
    // `<= now` as throttler's `expiresAt > now` filter keeps the rest.
    while (head < hits.length && hits[head] <= now) head++;
    if (head >= COMPACT_AT && head * 2 >= hits.length) {
      hits.splice(0, head);
      head = 0;
    }
    window.head = head;
    if (window.expiresAt <= now) window.expiresAt = now + ttlMs;
    const timeToExpire = Math.ceil((window.expiresAt - now) / 1000);
    const counted = hits.length - head;
    const isBlocked = counted >= limit;
    if (!isBlocked) hits.push(now + ttlMs);
    return {
      totalHits: counted + 1,
      timeToExpire,
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((hits[head] - now) / 1000) : 0,
    };
  }

  /**
   * Takes back the newest hit still counted in `key`'s window: a spend refunded. False when the
   * window holds none (it expired meanwhile, or was never spent).
   */
  release(key: string): boolean {
    const window = this.windows.get(key);
    if (!window) return false;
    const now = performance.now();
    while (window.head < window.hits.length && window.hits[window.head] <= now) window.head++;
    if (window.head >= window.hits.length) return false;
    window.hits.pop();
    return true;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.windows.clear();
  }

  /** Drops windows with no hit left and a countdown run out. */
  private sweep(now = performance.now()): void {
    for (const [key, window] of this.windows) {
      if (window.expiresAt > now) continue;
      const last = window.hits[window.hits.length - 1];
      if (last === undefined || last <= now) this.windows.delete(key);
    }
  }
}
