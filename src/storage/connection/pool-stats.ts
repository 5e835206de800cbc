import type { DataSource } from 'typeorm';
import type { PoolStats } from '../engine/pool-stats';
import { engineOf } from '../engines';

export type { PoolStats } from '../engine/pool-stats';

/**
 * The connection pool's state, for metrics: undefined on SQLite, which has no pool, or where the
 * driver's pool cannot be read (a metric then goes missing rather than lying).
 */
export function poolStatsOf(dataSource: DataSource): PoolStats | undefined {
  return engineOf(dataSource).poolStats(dataSource);
}
