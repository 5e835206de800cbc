import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import type { ReplicaConnection, ReplicaDriver, ReplicaPool } from '../engine/replicas';
import { engineOf } from '../engines';
import { query } from '../statements';

export type { ReplicaConnection } from '../engine/replicas';

/** How often the primary's position is taken and each replica asked whether it has reached it. */
const SAMPLE_EVERY_MS = 200;
/** A replica further behind the primary than this is not read: pages are never older. */
export const MAX_REPLICA_LAG_MS = 5_000;
/** A replica that does not answer a statement or a connection in this long has failed. */
const QUERY_TIMEOUT_MS = 3_000;
/** A replica that failed is left alone this long: its reads go to the primary meanwhile. */
const REST_AFTER_FAILURE_MS = 5_000;
/** How long a rank-index load waits for a replica to reach the primary's position of the moment. */
const LOAD_WAIT_MS = 5_000;
/** Rank-index loads reading replicas at once: the rest read the primary, pages keep the pools. */
const MAX_LOADS = 2;
const POOL_SIZE = 10;
/** Reads waiting for a replica connection beyond this go to the primary instead. */
const POOL_QUEUE_LIMIT = 50;
/** Samples a lagging replica is still compared with (the oldest go first). */
const MAX_PENDING_SAMPLES = 100;

interface Sample {
  /** performance.now() before the primary was asked: its position has every commit before. */
  at: number;
  position: string;
}

interface Replica {
  readonly name: string;
  readonly pool: ReplicaPool;
  /** The replica has every commit the primary had at this moment (performance.now()); 0: none known. */
  freshAsOf: number;
  /** Samples it has not reached yet, oldest first. */
  pending: Sample[];
  restUntil: number;
}

/** A replica's lag behind the primary as far as known, for metrics. */
export interface ReplicaLag {
  name: string;
  /** Undefined while unknown: never seen in step, resting after a failure, or no position on the primary. */
  lagMs?: number;
}

/**
 * Reads that may go to a replica (`readReplicas`): leaderboard pages served with SQL and
 * rank-index loads. The primary keeps every other read and every write.
 *
 * Every 200 ms the primary's position is taken (a GTID set on MySQL/MariaDB, a WAL location on
 * PostgreSQL: see the engine's ReplicaDriver), and each replica asked whether it has applied it:
 * a replica that has is known to hold every commit made before the position was taken. A read
 * goes to a replica only when that moment is later than this instance's latest commit (so an
 * instance never shows a page older than a write it acknowledged) and at most 5 s ago (so no page
 * is older than that either); otherwise to the primary. A replica that fails or takes over 3 s is
 * rested for 5 s. No position on the primary: replicas are never read.
 */
@Injectable()
export class ReadReplicas implements OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  private readonly driver?: ReplicaDriver;
  private readonly preferred: number;
  private readonly timer?: NodeJS.Timeout;
  /** performance.now() once this instance's latest commit had returned. */
  private lastCommitAt = 0;
  private sampling = false;
  private loads = 0;
  private warnedNoPosition = false;
  private closed = false;

  constructor(
    @InjectDataSource() private readonly primary: DataSource,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    const configured = options.readReplicas ?? [];
    this.replicas = [];
    this.preferred = 0;
    if (configured.length === 0) return;
    const engine = engineOf(primary);
    if (!engine.replicas)
      throw new Error(
        `readReplicas need a database server as the primary, not ${engine.dialect(primary).product}`,
      );
    const driver = engine.replicas;
    this.driver = driver;
    this.replicas = configured.map((endpoint) => {
      const pool = driver.pool(endpoint, {
        size: POOL_SIZE,
        queueLimit: POOL_QUEUE_LIMIT,
        timeoutMs: QUERY_TIMEOUT_MS,
      });
      return { name: pool.name, pool, freshAsOf: 0, pending: [], restUntil: 0 };
    });
    // Instances start on different replicas, which spreads the load.
    this.preferred = Math.floor(Math.random() * this.replicas.length);
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /** A commit this instance is about to acknowledge: replica reads wait until they hold it. */
  noteCommit(): void {
    this.lastCommitAt = performance.now();
  }

  /**
   * Runs a read on this instance's replica when it holds every write this instance acknowledged
   * and is at most 5 s behind, or on the primary.
   */
  async query<T = Record<string, unknown>>(sql: string, parameters: unknown[]): Promise<T[]> {
    const replica = this.usable(this.lastCommitAt);
    if (!replica) return query<T>(this.primary, sql, parameters);
    try {
      return await replica.pool.query<T>(sql, parameters);
    } catch (error) {
      this.rest(replica, error);
      return query<T>(this.primary, sql, parameters);
    }
  }

  /** Whether a read now would go to a replica (for tests and operators). */
  readsReplica(): boolean {
    return this.usable(this.lastCommitAt) !== undefined;
  }

  /**
   * For a rank-index load: a replica connection holding everything the primary had when this was
   * called (waiting up to 5 s for one to get there), or undefined: read the primary. At most two
   * loads read replicas at once, so that pages keep their connections.
   */
  async connectionAtPrimary(): Promise<ReplicaConnection | undefined> {
    if (!this.enabled || this.loads >= MAX_LOADS) return undefined;
    this.loads++;
    let handedOver = false;
    try {
      const since = performance.now();
      let replica = this.usable(since);
      while (!replica) {
        if (this.closed || !this.pick() || performance.now() - since > LOAD_WAIT_MS) return;
        await sleep(SAMPLE_EVERY_MS / 2);
        replica = this.usable(since);
      }
      const chosen = replica;
      const lent = await chosen.pool.connection().catch((error: unknown) => {
        this.rest(chosen, error);
        return undefined;
      });
      if (!lent) return undefined;
      handedOver = true;
      return {
        connection: lent.connection,
        done: (failed = false) => {
          this.loads--;
          lent.done(failed);
        },
      };
    } finally {
      if (!handedOver) this.loads--;
    }
  }

  /** Each replica's lag behind the primary, as far as the samples tell. */
  lags(): ReplicaLag[] {
    const now = performance.now();
    return this.replicas.map((replica) => ({
      name: replica.name,
      lagMs:
        replica.freshAsOf > 0 && replica.restUntil <= Date.now()
          ? now - replica.freshAsOf
          : undefined,
    }));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((replica) => replica.pool.end().catch(() => undefined)));
  }

  /** The replica to read when it holds every commit made before `since` and is fresh enough. */
  private usable(since: number): Replica | undefined {
    const replica = this.pick();
    if (!replica) return undefined;
    const fresh = replica.freshAsOf;
    return fresh > since && performance.now() - fresh <= MAX_REPLICA_LAG_MS ? replica : undefined;
  }

  /** This instance's replica while it is healthy, else the next healthy one. */
  private pick(): Replica | undefined {
    const now = Date.now();
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.preferred + i) % this.replicas.length];
      if (replica.restUntil <= now) return replica;
    }
    return undefined;
  }

  /** Takes the primary's position and asks each replica how far it has got. One at a time. */
  private async sample(): Promise<void> {
    if (this.sampling || this.closed) return;
    this.sampling = true;
    try {
      const at = performance.now();
      const driver = this.driver!;
      const position = await driver.primaryPosition(this.primary).catch(() => undefined);
      // The primary is away: nothing to compare with; replicas age out after 5 s.
      if (position === undefined) return;
      if (position === '') {
        if (!this.warnedNoPosition) {
          this.logger.warn(driver.noPosition);
          this.warnedNoPosition = true;
        }
        return;
      }
      await Promise.all(this.replicas.map((replica) => this.follow(replica, { at, position })));
    } finally {
      this.sampling = false;
    }
  }

  /** Moves a replica's freshAsOf to the newest sample it has reached (two questions at most). */
  private async follow(replica: Replica, sample: Sample): Promise<void> {
    if (replica.restUntil > Date.now()) return;
    replica.pending.push(sample);
    if (replica.pending.length > MAX_PENDING_SAMPLES) replica.pending.shift();
    try {
      if (await this.reached(replica, sample.position)) {
        replica.freshAsOf = sample.at;
        replica.pending = [];
        return;
      }
      const oldest = replica.pending[0];
      if (oldest !== sample && (await this.reached(replica, oldest.position))) {
        replica.freshAsOf = oldest.at;
        replica.pending.shift();
      }
    } catch (error) {
      this.rest(replica, error);
    }
  }

  private reached(replica: Replica, position: string): Promise<boolean> {
    return this.driver!.reached(replica.pool, position);
  }

  private rest(replica: Replica, error: unknown): void {
    if (replica.restUntil <= Date.now()) {
      this.logger.warn(
        `Replica ${replica.name} failed (${(error as Error).message}): not read for ${REST_AFTER_FAILURE_MS / 1000} s`,
      );
    }
    replica.restUntil = Date.now() + REST_AFTER_FAILURE_MS;
    // Back from a failure it proves again how far it has got (it may have been restored older).
    replica.freshAsOf = 0;
    replica.pending = [];
  }
}
