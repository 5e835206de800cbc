import type { DataSource } from 'typeorm';
import type { DatabaseProbe } from '../engine/database-probe';
import { ProbeConnection, ServerProbe } from '../probe/server-probe';
import { driverOf, PgQueryable } from './pg-statements';

/** The probe of a PostgreSQL server, on a node-postgres client of its own. */
export function postgresProbe(dataSource: DataSource, connectTimeoutMs: number): DatabaseProbe {
  const options = dataSource.options as {
    host?: string;
    port?: number;
    username?: string;
    password?: string;
    database?: string;
    ssl?: unknown;
  };
  const connect = async (): Promise<ProbeConnection> => {
    const client = new (driverOf(dataSource).postgres.Client)({
      host: options.host,
      port: options.port,
      user: options.username,
      password: options.password,
      database: options.database,
      ssl: options.ssl,
      connectionTimeoutMillis: connectTimeoutMs,
      application_name: 'loyalty-leaderboard probe',
    });
    // An error of an idle client is emitted, not thrown: unheard, it would end the process.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      client.connection?.stream?.destroy();
      throw error;
    }
    return {
      select1: async () => {
        await client.query({ text: 'SELECT 1' });
      },
      onGone: (listener) => {
        client.on('error', listener);
        client.on('end', listener);
      },
      destroy: () => {
        void client.end().catch(() => undefined);
        // end() says goodbye first; a server that no longer answers would keep the socket open.
        client.connection?.stream?.destroy();
      },
    };
  };
  return new ServerProbe(connect, (timeoutMs) => limitStatements(dataSource, timeoutMs));
}

/** pg-pool's options (what it makes each new client with) and idle clients, which it keeps. */
interface PoolInternals {
  options?: Record<string, unknown>;
  _idle?: Array<{ client?: PgQueryable }>;
}

/**
 * Every pooled connection's statement time and lock waits (statement_timeout, lock_timeout): in
 * the startup message of each one the pool opens from now on, and set on the idle ones there
 * already (connections in use are left alone: a SET inside someone's transaction would roll back
 * with it).
 */
function limitStatements(dataSource: DataSource, timeoutMs: number): void {
  const pool = driverOf(dataSource).master as unknown as PoolInternals | undefined;
  if (!pool?.options) return;
  const statementMs = Math.max(1, Math.round(timeoutMs));
  const lockMs = Math.max(1000, Math.ceil(timeoutMs / 1000) * 1000);
  pool.options.statement_timeout = statementMs;
  pool.options.lock_timeout = lockMs;
  const text = `SET statement_timeout = ${statementMs}; SET lock_timeout = ${lockMs}`;
  for (const idle of pool._idle ?? [])
    if (idle.client) void idle.client.query({ text }).catch(() => undefined);
}
