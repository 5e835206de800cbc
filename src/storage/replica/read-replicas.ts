import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolConnection } from 'mysql2';
import type { DataSource } from 'typeorm';
import type {
  LoyaltyModuleOptions,
  ReadReplicaOptions,
} from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import { identifyServer, ServerFlavor } from '../dialect/server-flavor';

/** A replica that failed is left alone this long: reads go to the primary meanwhile. */
const REST_AFTER_FAILURE_MS = 5_000;
/** How long a rank-index load waits for a replica to reach the primary before reading the primary. */
const LOAD_WAIT_SECONDS = 5;
const POOL_SIZE = 10;

interface Replica {
  readonly name: string;
  readonly pool: Pool;
  /** The acknowledgement serial this replica is known to have reached. */
  reached: number;
  restUntil: number;
}

/** A connection of a replica with its read done: give it back with done(). */
export interface ReplicaConnection {
  connection: PoolConnection;
  done(failed?: boolean): void;
}

/**
 * Reads that may go to a MySQL/MariaDB replica (`readReplicas`): leaderboard pages served with SQL
 * and rank-index loads. The primary keeps every other read and every write.
 *
 * Read-your-writes: after each commit this instance acknowledges, the runner calls
 * {@link noteCommit}, which takes the primary's GTID position; a read goes to a replica only once
 * that replica has executed it (MariaDB's MASTER_GTID_WAIT, MySQL's GTID_SUBSET over
 * gtid_executed, asked once per new position), else to the primary. So an instance never shows a
 * page older than a write it acknowledged; another instance's writes show once replicated.
 * A replica that fails is rested for 5 s, its reads on the primary.
 */
@Injectable()
export class ReadReplicas implements OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  private readonly preferred: number;
  /** Serial of the newest position taken, and of the acknowledgement it stands for. */
  private taken = 0;
  /** Position undefined: it could not be read, so no replica is trusted until the next one. */
  private acknowledged?: { serial: number; position?: string };
  private flavor?: Promise<ServerFlavor>;

  constructor(
    @InjectDataSource() private readonly primary: DataSource,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    const configured = options.readReplicas ?? [];
    if (
      configured.length > 0 &&
      primary.options.type !== 'mysql' &&
      primary.options.type !== 'mariadb'
    ) {
      throw new Error('readReplicas need a MySQL/MariaDB primary');
    }
    // mysql2 is an optional peer: loaded only by a host that has replicas (and so MySQL).
    const createPool =
      configured.length > 0
        ? // eslint-disable-next-line @typescript-eslint/no-require-imports
          (require('mysql2') as typeof import('mysql2')).createPool
        : undefined;
    this.replicas = configured.map((replica: ReadReplicaOptions) => ({
      name: `${replica.host}:${replica.port ?? 3306}`,
      pool: createPool!({
        host: replica.host,
        port: replica.port ?? 3306,
        user: replica.user,
        password: replica.password,
        database: replica.database,
        connectionLimit: POOL_SIZE,
        // As the primary's data source (data-source-options.ts).
        charset: 'utf8mb4',
        timezone: 'Z',
        supportBigNumbers: true,
        bigNumberStrings: true,
      }),
      reached: 0,
      restUntil: 0,
    }));
    this.preferred = Math.floor(Math.random() * Math.max(1, this.replicas.length));
  }

  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /**
   * A commit this instance is about to acknowledge: remembers the primary's position after it, so
   * that replica reads wait for it. A no-op without replicas.
   */
  async noteCommit(): Promise<void> {
    if (!this.enabled) return;
    const serial = ++this.taken;
    let position: string | undefined;
    try {
      position = await this.primaryPosition();
    } catch (error) {
      // Unknown: replicas are not trusted again until a later commit's position is taken.
      this.logger.warn(`Reading the primary's position failed: ${(error as Error).message}`);
    }
    // Positions taken later include earlier commits: never go back to an older one.
    if (!this.acknowledged || serial > this.acknowledged.serial) {
      this.acknowledged = { serial, position };
    }
  }

  /**
   * Runs a read on a replica that has every write this instance acknowledged, or on the primary
   * when none has (or none is configured, or one failed).
   */
  async query<T = Record<string, unknown>>(sql: string, parameters: unknown[]): Promise<T[]> {
    const replica = await this.caughtUp();
    if (!replica) return this.primary.query(sql, parameters);
    try {
      return await run<T>(replica.pool, sql, parameters);
    } catch (error) {
      this.rest(replica, error);
      return this.primary.query(sql, parameters);
    }
  }

  /**
   * For a rank-index load: a replica connection that has executed everything the primary had
   * committed when this was called (waiting up to 5 s), or undefined: read the primary.
   */
  async connectionAtPrimary(): Promise<ReplicaConnection | undefined> {
    const replica = this.pick();
    if (!replica) return undefined;
    let connection: PoolConnection | undefined;
    try {
      const position = await this.primaryPosition();
      connection = await new Promise<PoolConnection>((resolve, reject) =>
        replica.pool.getConnection((error, got) => (error ? reject(error) : resolve(got))),
      );
      const flavor = await this.flavorOfPrimary();
      const sql =
        flavor === 'mariadb'
          ? 'SELECT MASTER_GTID_WAIT(?, ?) = 0 AS reached'
          : 'SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?) = 0 AS reached';
      const [row] = await runOn<{ reached: number | string }>(connection, sql, [
        position,
        LOAD_WAIT_SECONDS,
      ]);
      if (Number(row?.reached) !== 1) {
        connection.release();
        return undefined;
      }
      const held = connection;
      return {
        connection: held,
        done: (failed = false) => (failed ? held.destroy() : held.release()),
      };
    } catch (error) {
      connection?.destroy();
      this.rest(replica, error);
      return undefined;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.replicas.map(
        (replica) => new Promise<void>((resolve) => replica.pool.end(() => resolve())),
      ),
    );
  }

  /** The next healthy replica that has reached this instance's acknowledged position, if any. */
  private async caughtUp(): Promise<Replica | undefined> {
    const replica = this.pick();
    if (!replica) return undefined;
    const wanted = this.acknowledged;
    if (!wanted || replica.reached >= wanted.serial) return replica;
    if (wanted.position === undefined) return undefined;
    try {
      const flavor = await this.flavorOfPrimary();
      const sql =
        flavor === 'mariadb'
          ? 'SELECT MASTER_GTID_WAIT(?, 0) = 0 AS reached'
          : 'SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS reached';
      const [row] = await run<{ reached: number | string }>(replica.pool, sql, [wanted.position]);
      if (Number(row?.reached) !== 1) return undefined;
      replica.reached = Math.max(replica.reached, wanted.serial);
      return replica;
    } catch (error) {
      this.rest(replica, error);
      return undefined;
    }
  }

  /**
   * This instance's replica while it is healthy, else the next healthy one. One replica for all
   * the statements of a page (not round robin), so that they read one replica's history;
   * instances start on different replicas, which spreads the load.
   */
  private pick(): Replica | undefined {
    const now = Date.now();
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.preferred + i) % this.replicas.length];
      if (replica.restUntil <= now) return replica;
    }
    return undefined;
  }

  private rest(replica: Replica, error: unknown): void {
    if (replica.restUntil <= Date.now()) {
      this.logger.warn(
        `Replica ${replica.name} failed (${(error as Error).message}): reading the primary for ${REST_AFTER_FAILURE_MS / 1000} s`,
      );
    }
    replica.restUntil = Date.now() + REST_AFTER_FAILURE_MS;
  }

  private async primaryPosition(): Promise<string> {
    const flavor = await this.flavorOfPrimary();
    const sql =
      flavor === 'mariadb'
        ? 'SELECT @@GLOBAL.gtid_binlog_pos AS position'
        : 'SELECT @@GLOBAL.gtid_executed AS position';
    const [row] = await this.primary.query<Array<{ position: string | null }>>(sql);
    return String(row?.position ?? '');
  }

  private flavorOfPrimary(): Promise<ServerFlavor> {
    this.flavor ??= identifyServer(this.primary).then((identity) => identity.flavor);
    return this.flavor;
  }
}

function run<T>(pool: Pool, sql: string, parameters: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) =>
    pool.query(sql, parameters, (error, rows) => (error ? reject(error) : resolve(rows as T[]))),
  );
}

function runOn<T>(connection: PoolConnection, sql: string, parameters: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) =>
    connection.query(sql, parameters, (error, rows) =>
      error ? reject(error) : resolve(rows as T[]),
    ),
  );
}
