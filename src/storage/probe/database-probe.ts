import type { Connection } from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { identifyServer, knownServerFlavor, ServerFlavor } from '../dialect/server-flavor';
import { dialectOf } from '../dialect/sql-dialect';

/** Asks the database whether it answers, for a health check. */
export interface DatabaseProbe {
  /** Resolves when the database answers `SELECT 1`. */
  select1(): Promise<void>;
  /** Drops whatever the last probe held (it failed or did not answer in time). */
  reset(): void;
  /** Gives every pooled connection this statement and lock-wait timeout, where the database can. */
  limitStatements(timeoutMs: number): void;
  close(): void;
}

/** The probe for a data source's database. */
export function createDatabaseProbe(
  dataSource: DataSource,
  connectTimeoutMs: number,
): DatabaseProbe {
  return dialectOf(dataSource).kind === 'sqlite'
    ? new EmbeddedProbe(dataSource)
    : new ServerProbe(dataSource, connectTimeoutMs);
}

/** SQLite: a query on the connection itself. */
class EmbeddedProbe implements DatabaseProbe {
  constructor(private readonly dataSource: DataSource) {}

  async select1(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  reset(): void {}

  limitStatements(): void {}

  close(): void {}
}

interface PoolLike {
  on(event: 'connection', listener: (connection: { query(sql: string): unknown }) => void): void;
  _freeConnections?: { toArray?: () => Array<{ query(sql: string): unknown }> };
}

/**
 * MySQL/MariaDB: the probe has a connection of its own, outside the pool: with every pooled
 * connection busy on slow requests, a probe that queued for one would call a loaded database down.
 */
class ServerProbe implements DatabaseProbe {
  /** Opened on first use and after a failure. */
  private probeConnection?: Promise<Connection>;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly connectTimeoutMs: number,
  ) {}

  async select1(): Promise<void> {
    const reused = this.probeConnection !== undefined;
    const first = this.open();
    try {
      await (await first).query('SELECT 1');
    } catch (error) {
      // A kept connection may have died with a server restart: one more try on a fresh one
      // before the database is called down.
      if (!reused || this.closed) throw error;
      this.drop(first);
      await (await this.open()).query('SELECT 1');
    }
  }

  reset(): void {
    this.drop();
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /** A request cut off at its deadline then does not leave its query holding a connection. */
  limitStatements(timeoutMs: number): void {
    const pool = (this.dataSource.driver as unknown as { pool?: PoolLike }).pool;
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
    const known = knownServerFlavor(this.dataSource);
    if (known) limit(known);
    else
      identifyServer(this.dataSource).then(
        ({ flavor }) => limit(flavor),
        () => undefined,
      );
  }

  private open(): Promise<Connection> {
    if (this.probeConnection) return this.probeConnection;
    const options = this.dataSource.options as {
      host?: string;
      port?: number;
      username?: string;
      password?: string;
      database?: string;
    };
    // mysql2 is loaded on first use: it is an optional peer, which SQLite hosts do not install.
    const opened = import('mysql2/promise').then(({ createConnection }) =>
      createConnection({
        host: options.host,
        port: options.port,
        user: options.username,
        password: options.password,
        database: options.database,
        connectTimeout: this.connectTimeoutMs,
      }),
    );
    this.probeConnection = opened;
    opened.then(
      (connection) => {
        // Opened after close (a probe that was still connecting): not kept.
        if (this.closed) return this.drop(opened);
        // A connection that errs or ends is replaced on next use.
        const forget = () => this.drop(opened);
        connection.on('error', forget);
        connection.on('end', forget);
      },
      () => undefined,
    );
    return opened;
  }

  /** Closes this probe connection (the current one by default), its socket at once. */
  private drop(which = this.probeConnection): void {
    if (!which) return;
    if (this.probeConnection === which) this.probeConnection = undefined;
    which
      .then((connection) => {
        connection.destroy();
        // destroy() ends the socket politely; a server that no longer answers would keep it
        // (and the process) open until TCP gives up.
        (
          connection as unknown as { connection?: { stream?: { destroy(): void } } }
        ).connection?.stream?.destroy();
      })
      .catch(() => undefined);
  }
}
