/** A connection pool's state, for metrics. */
export interface PoolStats {
  /** Connections open, busy or idle. */
  open: number;
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
  /** Connections the pool may open. */
  limit: number;
}
