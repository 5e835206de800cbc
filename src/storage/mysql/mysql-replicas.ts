import type { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import type {
  ReplicaConnection,
  ReplicaDriver,
  ReplicaEndpoint,
  ReplicaPool,
  ReplicaPoolLimits,
} from '../engine/replicas';
import { flavorOfVersion, identifyServer, ServerFlavor } from './server-flavor';

// The parts of mysql2's callback API used here: mysql2 is an optional peer, so the library's
// typings do not name it.
type Callback = (error: Error | null, rows?: unknown) => void;
interface PoolConnectionLike {
  query(options: { sql: string; rowsAsArray: boolean }, parameters: unknown[]): EventEmitter;
  release(): void;
  destroy(): void;
}
interface PoolLike {
  query(options: { sql: string; timeout: number }, parameters: unknown[], done: Callback): void;
  getConnection(done: (error: Error | null, connection: PoolConnectionLike) => void): void;
  end(done: () => void): void;
}

/**
 * MySQL/MariaDB replicas, followed by GTID: the primary's position (MariaDB's gtid_binlog_pos,
 * MySQL's gtid_executed), and whether a replica has executed it (MASTER_GTID_WAIT(position, 0),
 * GTID_SUBSET over its gtid_executed).
 */
export const MYSQL_REPLICAS: ReplicaDriver = {
  pool: (endpoint, limits) => mysqlReplicaPool(endpoint, limits),
  primaryPosition: async (primary: DataSource) => {
    const mariadb = (await identifyServer(primary)).flavor === 'mariadb';
    const sql = mariadb
      ? 'SELECT @@GLOBAL.gtid_binlog_pos AS position'
      : 'SELECT @@GLOBAL.gtid_executed AS position';
    const [row] = await primary.query<Array<{ position: string | null }>>(sql);
    return String(row?.position ?? '');
  },
  reached: async (replica, position) => {
    const [row] = await replica.query<{ reached: number | string }>(
      (await flavorOf(replica)) === 'mariadb'
        ? 'SELECT MASTER_GTID_WAIT(?, 0) = 0 AS reached'
        : 'SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS reached',
      [position],
    );
    return Number(row?.reached) === 1;
  },
  noPosition: 'The primary has no GTID position (binary log or GTIDs off): replicas are not read',
};

interface MysqlReplicaPool extends ReplicaPool {
  /** Which server the replica is, which decides how it is asked (learnt on first use). */
  flavor?: Promise<ServerFlavor>;
}

function flavorOf(replica: MysqlReplicaPool): Promise<ServerFlavor> {
  if (!replica.flavor) {
    const asking = replica
      .query<{ version: string }>('SELECT VERSION() AS version', [])
      .then(([row]) => flavorOfVersion(String(row?.version ?? '')));
    // A replica that was away is asked again next time.
    asking.catch(() => (replica.flavor = undefined));
    replica.flavor = asking;
  }
  return replica.flavor;
}

function mysqlReplicaPool(endpoint: ReplicaEndpoint, limits: ReplicaPoolLimits): ReplicaPool {
  // mysql2 is an optional peer: loaded only by a host that has replicas (and so MySQL).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mysql2 = require('mysql2') as { createPool(options: Record<string, unknown>): PoolLike };
  const port = endpoint.port ?? 3306;
  if (endpoint.tls && endpoint.tls !== 'disable')
    throw new Error(
      `readReplicas: ${endpoint.host}:${port}: tls is read for PostgreSQL replicas only; MySQL replicas are reached without it`,
    );
  const pool = mysql2.createPool({
    host: endpoint.host,
    port,
    user: endpoint.user,
    password: endpoint.password,
    database: endpoint.database,
    connectionLimit: limits.size,
    queueLimit: limits.queueLimit,
    connectTimeout: limits.timeoutMs,
    // As the primary's data source (mysql-connection.ts).
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
  });
  const query = <T>(sql: string, params: readonly unknown[]) =>
    new Promise<T[]>((resolve, reject) =>
      pool.query({ sql, timeout: limits.timeoutMs }, [...params], (error, rows) =>
        error ? reject(error) : resolve(rows as T[]),
      ),
    );
  const replica: MysqlReplicaPool = {
    name: `${endpoint.host}:${port}`,
    query,
    connection: () =>
      new Promise<ReplicaConnection>((resolve, reject) =>
        pool.getConnection((error, connection) =>
          error
            ? reject(error)
            : resolve({
                connection,
                done: (failed = false) => (failed ? connection.destroy() : connection.release()),
              }),
        ),
      ),
    end: () => new Promise<void>((resolve) => pool.end(resolve)),
  };
  return replica;
}
