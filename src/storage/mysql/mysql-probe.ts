import type { DataSource } from 'typeorm';
import type { DatabaseProbe } from '../engine/database-probe';
import { ProbeConnection, ServerProbe } from '../probe/server-probe';
import { identifyServer, knownServerFlavor, ServerFlavor } from './server-flavor';

interface PoolLike {
  on(event: 'connection', listener: (connection: { query(sql: string): unknown }) => void): void;
  _freeConnections?: { toArray?: () => Array<{ query(sql: string): unknown }> };
}

/** The probe of a MySQL or MariaDB server, on a mysql2 connection of its own. */
export function mysqlProbe(dataSource: DataSource, connectTimeoutMs: number): DatabaseProbe {
  const options = dataSource.options as {
    host?: string;
    port?: number;
    username?: string;
    password?: string;
    database?: string;
  };
  const connect = async (): Promise<ProbeConnection> => {
    // mysql2 is loaded on first use: it is an optional peer, which other hosts do not install.
    const { createConnection } = await import('mysql2/promise');
    const connection = await createConnection({
      host: options.host,
      port: options.port,
      user: options.username,
      password: options.password,
      database: options.database,
      connectTimeout: connectTimeoutMs,
    });
    return {
      select1: async () => {
        await connection.query('SELECT 1');
      },
      onGone: (listener) => {
        connection.on('error', listener);
        connection.on('end', listener);
      },
      destroy: () => {
        connection.destroy();
        // destroy() ends the socket politely; a server that no longer answers would keep it
        // (and the process) open until TCP gives up.
        (
          connection as unknown as { connection?: { stream?: { destroy(): void } } }
        ).connection?.stream?.destroy();
      },
    };
  };
  return new ServerProbe(connect, (timeoutMs) => limitStatements(dataSource, timeoutMs));
}

/** Every pooled connection's statement time and lock waits, in the server's own variables. */
function limitStatements(dataSource: DataSource, timeoutMs: number): void {
  const pool = (dataSource.driver as unknown as { pool?: PoolLike }).pool;
  if (!pool) return;
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  // The variable is the server's, not the data source type's: `type: 'mysql'` reaches MariaDB too.
  const limit = (flavor: ServerFlavor) => {
    const statement =
      flavor === 'mariadb'
        ? `SET SESSION max_statement_time = ${timeoutMs / 1000}, lock_wait_timeout = ${seconds}, innodb_lock_wait_timeout = ${seconds}`
        : `SET SESSION max_execution_time = ${timeoutMs}, lock_wait_timeout = ${seconds}, innodb_lock_wait_timeout = ${seconds}`;
    pool.on('connection', (connection) => connection.query(statement));
    // Connections opened before this point (migrations at start) get it too.
    for (const connection of pool._freeConnections?.toArray?.() ?? []) {
      connection.query(statement);
    }
  };
  // Known by now in a started module (its dialect asked); otherwise asked first.
  const known = knownServerFlavor(dataSource);
  if (known) limit(known);
  else
    identifyServer(dataSource).then(
      ({ flavor }) => limit(flavor),
      () => undefined,
    );
}
