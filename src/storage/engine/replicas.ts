import type { DataSource } from 'typeorm';
import type { ServerConfig } from './database-config';

/** Where a read replica answers (LoyaltyModuleOptions.readReplicas). */
export interface ReplicaEndpoint {
  host: string;
  port?: number;
  user: string;
  password?: string;
  database: string;
  /** PostgreSQL's sslmode, as for the primary. */
  tls?: ServerConfig['tls'];
}

/** How a replica's connections are held. */
export interface ReplicaPoolLimits {
  size: number;
  /** Reads waiting for a connection beyond this fail at once (and go to the primary). */
  queueLimit: number;
  /** A statement or a connection attempt that takes longer has failed. */
  timeoutMs: number;
}

/** A connection of a replica's pool, lent to one long read (a rank-index load). */
export interface ReplicaConnection {
  /** The driver's connection: the engine that lent it knows its type. */
  connection: unknown;
  /** Gives the connection back, or drops it when the read failed or was abandoned. */
  done(failed?: boolean): void;
}

/** A pool of connections to one replica. */
export interface ReplicaPool {
  /** host:port, for messages and metrics. */
  readonly name: string;
  /** Runs a read of house SQL on a pooled connection. */
  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<T[]>;
  /** A connection of its own, for a long read. */
  connection(): Promise<ReplicaConnection>;
  end(): Promise<void>;
}

/**
 * How one database's replicas are reached and how far they have got: a position of the primary
 * (a GTID set, a WAL location) taken now, and whether a replica has applied everything up to it.
 */
export interface ReplicaDriver {
  pool(endpoint: ReplicaEndpoint, limits: ReplicaPoolLimits): ReplicaPool;
  /** The primary's position now; '' when it keeps none that replicas can be compared with. */
  primaryPosition(primary: DataSource): Promise<string>;
  /** Whether the replica has applied every change up to `position`. */
  reached(replica: ReplicaPool, position: string): Promise<boolean>;
  /** Why replicas are not read when the primary has no position, for the operator's log. */
  readonly noPosition: string;
}
