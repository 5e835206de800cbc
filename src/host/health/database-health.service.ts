import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { createDatabaseProbe, DatabaseProbe } from '../../storage/database-probe';

export const HEALTH_OPTIONS = Symbol('HEALTH_OPTIONS');

export interface HealthOptions {
  /** Statements are cut off after this long where the database can (the request deadline). */
  statementTimeoutMs: number;
}

const PROBE_EVERY_MS = 1_000;
const PROBE_WHILE_DOWN_MS = 250;
const PROBE_TIMEOUT_MS = 1_000;
/** A timer this late means this process was busy, not waiting (a long GC pause, a large sort). */
const STALLED_MS = 100;
/** A process that keeps stalling still calls a silent database down, after this many restarts. */
const MAX_RESTARTS = 3;

/**
 * Knows whether the database answers, from a periodic probe (DatabaseProbe, which never queues
 * behind busy pooled connections): while it is down, requests get 503 at once instead of each
 * waiting for a connection attempt, and the service recovers by itself when the probe succeeds.
 */
@Injectable()
export class DatabaseHealth implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private up = true;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private downSince: number | null = null;
  private readonly database: DatabaseProbe;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(HEALTH_OPTIONS) private readonly options: HealthOptions,
  ) {
    this.database = createDatabaseProbe(dataSource, PROBE_TIMEOUT_MS);
  }

  isUp(): boolean {
    return this.up;
  }

  onApplicationBootstrap(): void {
    this.database.limitStatements(this.options.statementTimeoutMs);
    this.schedule();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.database.close();
  }

  /** One probe now; the schedule keeps running. */
  async probe(): Promise<boolean> {
    try {
      await Promise.race([this.database.select1(), noAnswerWithin(PROBE_TIMEOUT_MS)]);
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
      this.database.reset();
    }
    return this.up;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => void this.probe().finally(() => this.schedule()),
      this.up ? PROBE_EVERY_MS : PROBE_WHILE_DOWN_MS,
    );
    this.timer.unref();
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
