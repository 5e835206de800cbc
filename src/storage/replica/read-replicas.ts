import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type {
  LoyaltyModuleOptions,
  ReadReplicaOptions,
} from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import { identifyServer } from '../dialect/server-flavor';

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

/** A statement streamed on a connection (mysql2's callback API). */
export interface StreamingConnection {
  query(options: { sql: string; rowsAsArray: boolean }, parameters: unknown[]): EventEmitter;
}

/** The connection of a rank-index load on a replica. */
export interface ReplicaConnection {
  connection: StreamingConnection;
  /** Gives the connection back, or drops it when the read failed or was abandoned. */
  done(failed?: boolean): void;
}

// The parts of mysql2's callback API used here: mysql2 is an optional peer, so the library's
// typings do not name it.
type Callback = (error: Error | null, rows?: unknown) => void;
interface PoolConnectionLike extends StreamingConnection {
  query(options: { sql: string; timeout?: number }, parameters: unknown[], done: Callback): void;
  query(options: { sql: string; rowsAsArray: boolean }, parameters: unknown[]): EventEmitter;
  release(): void;
  destroy(): void;
}
interface PoolLike {
  query(options: { sql: string; timeout: number }, parameters: unknown[], done: Callback): void;
  getConnection(done: (error: Error | null, connection: PoolConnectionLike) => void): void;
  end(done: () => void): void;
}

interface Sample {
  /** performance.now() before the primary was asked: its position has every commit before. */
  at: number;
  position: string;
}

interface Replica {
  readonly name: string;
  readonly pool: PoolLike;
  /** The replica has every commit the primary had at this moment (performance.now()); 0: none known. */
  freshAsOf: number;
  /** Samples it has not reached yet, oldest first. */
  pending: Sample[];
  restUntil: number;
}

/** A replica's lag behind the primary as far as known, for metrics. */
export interface ReplicaLag {
  name: string;
  /** Undefined while unknown: never seen in step, resting after a failure, or GTIDs off. */
  lagMs?: number;
}

/**
 * Reads that may go to a MySQL/MariaDB replica (`readReplicas`): leaderboard pages served with SQL
 * and rank-index loads. The primary keeps every other read and every write.
 *
 * Every 200 ms the primary's GTID position is taken, and each replica asked whether it has
 * executed it (MariaDB's MASTER_GTID_WAIT(position, 0), MySQL's GTID_SUBSET over gtid_executed):
 * a replica that has is known to hold every commit made before the position was taken. A read
 * goes to a replica only when that moment is later than this instance's latest commit (so an
 * instance never shows a page older than a write it acknowledged) and at most 5 s ago (so no page
 * is older than that either); otherwise to the primary. A replica that fails or takes over 3 s is
 * rested for 5 s. No GTIDs on the primary: replicas are never read.
 */
@Injectable()
export class ReadReplicas implements OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  private readonly preferred: number;
  private readonly timer?: NodeJS.Timeout;
  /** performance.now() once this instance's latest commit had returned. */
  private lastCommitAt = 0;
  private sampling = false;
  private loads = 0;
  private warnedNoGtid = false;
  private closed = false;

  constructor(
    @InjectDataSource() private readonly primary: DataSource,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    const configured = options.readReplicas ?? [];
    this.replicas = [];
    this.preferred = 0;
    if (configured.length === 0) return;
    if (primary.options.type !== 'mysql' && primary.options.type !== 'mariadb') {
      throw new Error('readReplicas need a MySQL/MariaDB primary');
    }
    // mysql2 is an optional peer: loaded only by a host that has replicas (and so MySQL).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mysql2 = require('mysql2') as {
      createPool(options: Record<string, unknown>): PoolLike;
    };
    this.replicas = configured.map((replica: ReadReplicaOptions) => ({
      name: `${replica.host}:${replica.port ?? 3306}`,
      pool: mysql2.createPool({
        host: replica.host,
        port: replica.port ?? 3306,
        user: replica.user,
        password: replica.password,
        database: replica.database,
        connectionLimit: POOL_SIZE,
        queueLimit: POOL_QUEUE_LIMIT,
        connectTimeout: QUERY_TIMEOUT_MS,
        // As the primary's data source (data-source-options.ts).
        charset: 'utf8mb4',
        timezone: 'Z',
        supportBigNumbers: true,
        bigNumberStrings: false,
      }),
      freshAsOf: 0,
      pending: [],
      restUntil: 0,
    }));
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
    if (!replica) return this.primary.query(sql, parameters);
    try {
      return await new Promise<T[]>((resolve, reject) =>
        replica.pool.query({ sql, timeout: QUERY_TIMEOUT_MS }, parameters, (error, rows) =>
          error ? reject(error) : resolve(rows as T[]),
        ),
      );
    } catch (error) {
      this.rest(replica, error);
      return this.primary.query(sql, parameters);
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
      const connection = await new Promise<PoolConnectionLike>((resolve, reject) =>
        chosen.pool.getConnection((error, got) => (error ? reject(error) : resolve(got))),
      ).catch((error: unknown) => {
        this.rest(chosen, error);
        return undefined;
      });
      if (!connection) return undefined;
      handedOver = true;
      return {
        connection,
        done: (failed = false) => {
          this.loads--;
          if (failed) connection.destroy();
          else connection.release();
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
    await Promise.all(
      this.replicas.map((replica) => new Promise<void>((resolve) => replica.pool.end(resolve))),
    );
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
      const position = await this.primaryPosition().catch(() => undefined);
      // The primary is away: nothing to compare with; replicas age out after 5 s.
      if (position === undefined) return;
      if (position === '') {
        if (!this.warnedNoGtid) {
          this.logger.warn(
            'The primary has no GTID position (binary log or GTIDs off): replicas are not read',
          );
          this.warnedNoGtid = true;
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

  private async reached(replica: Replica, position: string): Promise<boolean> {
    const mariadb = (await identifyServer(this.primary)).flavor === 'mariadb';
    const sql = mariadb
      ? 'SELECT MASTER_GTID_WAIT(?, 0) = 0 AS reached'
      : 'SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS reached';
    const rows = await new Promise<Array<{ reached: number | string }>>((resolve, reject) =>
      replica.pool.query({ sql, timeout: QUERY_TIMEOUT_MS }, [position], (error, found) =>
        error ? reject(error) : resolve(found as Array<{ reached: number | string }>),
      ),
    );
    return Number(rows[0]?.reached) === 1;
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

  private async primaryPosition(): Promise<string> {
    const mariadb = (await identifyServer(this.primary)).flavor === 'mariadb';
    const sql = mariadb
      ? 'SELECT @@GLOBAL.gtid_binlog_pos AS position'
      : 'SELECT @@GLOBAL.gtid_executed AS position';
    const [row] = await this.primary.query<Array<{ position: string | null }>>(sql);
    return String(row?.position ?? '');
  }
}
