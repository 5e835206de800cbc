import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Connection, createConnection } from 'mysql2/promise';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { dialectOf } from '../../storage/dialect/sql-dialect';

export const HEALTH_OPTIONS = Symbol('HEALTH_OPTIONS');

export interface HealthOptions {
  /** Statements on MySQL/MariaDB are cut off after this long (the request deadline). */
  statementTimeoutMs: number;
}

const PROBE_EVERY_MS = 1_000;
const PROBE_WHILE_DOWN_MS = 250;
const PROBE_TIMEOUT_MS = 1_000;
/** A timer this late means this process was busy, not waiting (a long GC pause, a large sort). */
const STALLED_MS = 100;
/** A process that keeps stalling still calls a silent database down, after this many restarts. */
const MAX_RESTARTS = 3;

interface PoolLike {
  on(event: 'connection', listener: (connection: { query(sql: string): unknown }) => void): void;
  _freeConnections?: { toArray?: () => Array<{ query(sql: string): unknown }> };
}

/**
 * Knows whether the database answers. A probe runs every second (four times a second while the
 * database is down); while it is down, requests are refused at once with 503 instead of each
 * waiting for a connection attempt, and the service recovers by itself when the probe succeeds.
 *
 * On MySQL/MariaDB the probe has a connection of its own, outside the pool: with every pooled
 * connection busy on slow requests, a probe that queued for one would call a loaded database down
 * and refuse all traffic. It also gives every pooled connection a statement and lock-wait timeout,
 * so a request cut off at its deadline does not leave its query holding a connection.
 */
@Injectable()
export class DatabaseHealth implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private up = true;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private downSince: number | null = null;
  /** MySQL/MariaDB: the probe's own connection, opened on first use and after a failure. */
  private probeConnection?: Promise<Connection>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(HEALTH_OPTIONS) private readonly options: HealthOptions,
  ) {}

  isUp(): boolean {
    return this.up;
  }

  onApplicationBootstrap(): void {
    this.limitSessions();
    this.schedule();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.dropProbeConnection();
  }

  /** One probe now; the schedule keeps running. */
  async probe(): Promise<boolean> {
    try {
      await Promise.race([this.select1(), noAnswerWithin(PROBE_TIMEOUT_MS)]);
      if (!this.up) {
        this.logger.log(`Database is back after ${Date.now() - (this.downSince ?? Date.now())} ms`);
        this.downSince = null;
      }
      this.up = true;
    } catch (error) {
      if (this.up) {
        this.downSince = Date.now();
        this.logger.error(
          `Database unreachable (${(error as Error).message}); answering 503 until it returns`,
        );
      }
      this.up = false;
      // A connection that failed or did not answer in time is not trusted again.
      this.dropProbeConnection();
    }
    return this.up;
  }

  private async select1(): Promise<void> {
    if (dialectOf(this.dataSource) !== 'mysql') {
      await this.dataSource.query('SELECT 1');
      return;
    }
    const reused = this.probeConnection !== undefined;
    const first = this.openProbeConnection();
    try {
      await (await first).query('SELECT 1');
    } catch (error) {
      // A kept connection may have died with a server restart: one more try on a fresh one
      // before the database is called down.
      if (!reused || this.stopped) throw error;
      this.dropProbeConnection(first);
      await (await this.openProbeConnection()).query('SELECT 1');
    }
  }

  private openProbeConnection(): Promise<Connection> {
    if (this.probeConnection) return this.probeConnection;
    const options = this.dataSource.options as {
      host?: string;
      port?: number;
      username?: string;
      password?: string;
      database?: string;
    };
    const opened = createConnection({
      host: options.host,
      port: options.port,
      user: options.username,
      password: options.password,
      database: options.database,
      connectTimeout: PROBE_TIMEOUT_MS,
    });
    this.probeConnection = opened;
    opened.then(
      (connection) => {
        // Opened after shutdown (a probe that was still connecting): not kept.
        if (this.stopped) return this.dropProbeConnection(opened);
        // A connection that errs or ends is replaced on next use.
        const forget = () => this.dropProbeConnection(opened);
        connection.on('error', forget);
        connection.on('end', forget);
      },
      () => undefined,
    );
    return opened;
  }

  /** Closes this probe connection (the current one by default), its socket at once. */
  private dropProbeConnection(which = this.probeConnection): void {
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

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => void this.probe().finally(() => this.schedule()),
      this.up ? PROBE_EVERY_MS : PROBE_WHILE_DOWN_MS,
    );
    this.timer.unref();
  }

  private limitSessions(): void {
    if (dialectOf(this.dataSource) !== 'mysql') return;
    const pool = (this.dataSource.driver as unknown as { pool?: PoolLike }).pool;
    if (!pool) return;
    const seconds = Math.max(1, Math.ceil(this.options.statementTimeoutMs / 1000));
    const statement =
      this.dataSource.options.type === 'mariadb'
        ? `SET SESSION max_statement_time = ${this.options.statementTimeoutMs / 1000}, lock_wait_timeout = ${seconds}, innodb_lock_wait_timeout = ${seconds}`
        : `SET SESSION max_execution_time = ${this.options.statementTimeoutMs}, lock_wait_timeout = ${seconds}, innodb_lock_wait_timeout = ${seconds}`;
    pool.on('connection', (connection) => connection.query(statement));
    // Connections opened before this point (migrations at start) get it too.
    for (const connection of pool._freeConnections?.toArray?.() ?? []) connection.query(statement);
  }
}

/**
 * Rejects once `ms` has passed with this process free to read the answer. A timer that fires late
 * fired after a stall of this process: the answer may be waiting, unread, in the socket (timers run
 * before I/O in each turn of the event loop), so the wait starts again instead of calling the
 * database down and refusing every request for a pause of our own.
 */
function noAnswerWithin(ms: number): Promise<never> {
  return new Promise((_, reject) => {
    let restarts = 0;
    const wait = () => {
      const due = performance.now() + ms;
      setTimeout(() => {
        if (performance.now() - due > STALLED_MS && restarts++ < MAX_RESTARTS) wait();
        else reject(new Error(`no answer within ${ms} ms`));
      }, ms).unref();
    };
    wait();
  });
}
