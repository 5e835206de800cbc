import type { DataSource } from 'typeorm';
import type { PoolStats } from '../engine/pool-stats';

interface CountedQueue {
  length: number;
}

interface Mysql2PoolLike {
  _allConnections?: CountedQueue;
  _freeConnections?: CountedQueue;
  _connectionQueue?: CountedQueue;
  config?: { connectionLimit?: number };
}

/**
 * The MySQL/MariaDB pool's state, read from mysql2's pool (it has no public accessor for it;
 * these fields have been its queues since mysql2 1.x). Undefined if a mysql2 release renames
 * them: a metric then goes missing rather than lying.
 */
export function mysqlPoolStats(dataSource: DataSource): PoolStats | undefined {
  const pool = (dataSource.driver as unknown as { pool?: Mysql2PoolLike }).pool;
  const all = pool?._allConnections?.length;
  const free = pool?._freeConnections?.length;
  const queued = pool?._connectionQueue?.length;
  if (typeof all !== 'number' || typeof free !== 'number' || typeof queued !== 'number') {
    return undefined;
  }
  return { open: all, idle: free, waiting: queued, limit: pool?.config?.connectionLimit ?? 0 };
}
