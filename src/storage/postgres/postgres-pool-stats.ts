import type { DataSource } from 'typeorm';
import type { PoolStats } from '../engine/pool-stats';
import { driverOf } from './pg-statements';

/** pg-pool's own counters (public: totalCount, idleCount, waitingCount, options.max). */
export function postgresPoolStats(dataSource: DataSource): PoolStats | undefined {
  const pool = driverOf(dataSource).master;
  if (!pool || typeof pool.totalCount !== 'number') return undefined;
  return {
    open: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    limit: pool.options?.max ?? 0,
  };
}
