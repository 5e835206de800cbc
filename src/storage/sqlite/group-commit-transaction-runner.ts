import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import {
  collectCommitHooks,
  commitsRightAfter,
  runCommitHooks,
} from '../transactions/commit-hooks';
import { backOffOrThrow, newAttempts, retryLimitOf } from '../transactions/retry-policy';
import {
  PrepareSync,
  TransactionObserver,
  TransactionRunner,
} from '../transactions/transaction-runner';
import { COMMIT_DELAY_MS, MAX_GROUP, WriteLoadHint } from '../transactions/write-load';
import { nativeSqlite } from './sqlite-native';
import { WriterConnection } from './writer-connection';

/**
 * The first statement of every write transaction: it takes the database's write lock and changes
 * nothing. TypeORM begins transactions DEFERRED, so a unit that read first would take the lock at
 * its first write, where SQLite answers SQLITE_BUSY at once instead of waiting busy_timeout.
 */
const TAKE_WRITE_LOCK = 'DELETE FROM service_settings WHERE 0';

/** A group takes no further unit once it has run this long; the rest commit in the next one. */
const GROUP_BUDGET_MS = 200;

const NO_LOAD: WriteLoadHint = { expectedUnits: () => 1, waitedInVain: () => undefined };

interface PendingUnit {
  work: (manager: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type UnitResult =
  { ok: true; value: unknown; hooks: Array<() => void> } | { ok: false; error: unknown };

/**
 * SQLite's runner: one writer connection; units queued while it is busy share one transaction,
 * since concurrent ingests dirty many of the same pages and a commit writes each once. A failing
 * unit takes the group down: those before it run again and commit, it fails alone, those after go
 * to the next group (not savepoints, under which SQLite copies every page a unit touches).
 */
export class GroupCommitTransactionRunner
  extends TransactionRunner
  implements OnApplicationShutdown
{
  readonly singleWriter = true;
  private readonly logger = new Logger('Transactions');
  private readonly pending: PendingUnit[] = [];
  /** Set while drain() runs; cleared in the same step that finds nothing pending. */
  private draining?: Promise<void>;
  private readonly writer: WriterConnection;
  private load = NO_LOAD;
  /** Wakes a drain() that waits for more units. */
  private wake?: () => void;
  private readonly observers: TransactionObserver[] = [];

  constructor(dataSource: DataSource) {
    super();
    this.writer = new WriterConnection(dataSource);
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.draining ??= this.drain();
      this.wake?.();
    });
  }

  observe(observer: TransactionObserver): void {
    this.observers.push(observer);
  }

  useLoadHint(hint: WriteLoadHint): void {
    this.load = hint;
  }

  /** The writer connection's better-sqlite3 statements, which run inside its transaction. */
  override syncStatements(manager: EntityManager): PrepareSync | undefined {
    return nativeSqlite(manager);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.draining;
    await this.writer.close();
  }

  private async drain(): Promise<void> {
    // Units the last group left over (its budget ran out, or a unit before them failed).
    let carried = false;
    for (;;) {
      if (this.pending.length === 0) {
        this.draining = undefined;
        return;
      }
      // One turn of the event loop first: requests whose bodies have arrived queue their units
      // and join the group. Units left over by the last group have waited long enough.
      await new Promise((resolve) => setImmediate(resolve));
      if (!carried) await this.awaitCompany();
      const group = this.pending.splice(0, MAX_GROUP);
      let results: UnitResult[];
      try {
        results = await this.runGroupWithRetry(group);
      } catch (error) {
        for (const unit of group) unit.reject(error);
        carried = false;
        continue;
      }
      // Units the group did not answer (no time left, or after a failed unit) go first in the next.
      const left = group.slice(results.length);
      this.pending.unshift(...left);
      carried = left.length > 0;
      results.forEach((result, i) => this.settle(group[i], result));
    }
  }

  /** Until as many units are pending as the load hint expects, or COMMIT_DELAY_MS. */
  private async awaitCompany(): Promise<void> {
    const until = performance.now() + COMMIT_DELAY_MS;
    for (;;) {
      const left = until - performance.now();
      const company = Math.min(MAX_GROUP, this.load.expectedUnits());
      if (this.pending.length >= company) return;
      if (left <= 0) {
        this.load.waitedInVain(this.pending.length);
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** A unit's commit hooks, then its answer. */
  private settle(unit: PendingUnit, result: UnitResult): void {
    if (!result.ok) return unit.reject(result.error);
    runCommitHooks(this.logger, result.hooks);
    unit.resolve(result.value);
  }

  /**
   * Answers the results of the group's first units, in order: all of them, as many as ran within
   * GROUP_BUDGET_MS, or those up to a failed unit. A failure of the group as a whole (a retryable
   * one that persists, or the commit) fails every unit of the group.
   */
  private async runGroupWithRetry(group: readonly PendingUnit[]): Promise<UnitResult[]> {
    const attempts = newAttempts();
    for (;;) {
      try {
        return await this.runGroup(await this.writer.get(), group);
      } catch (error) {
        if (error instanceof UnitFailed) {
          // Rolled back with the units before it: they run again without it; it fails alone.
          const before =
            error.index === 0 ? [] : await this.runGroupWithRetry(group.slice(0, error.index));
          // They did not all commit this time (the budget ran out, or one failed now): the failed
          // unit runs again in a later group, after them, on what they leave.
          if (before.length < error.index || before.some((result) => !result.ok)) return before;
          return [...before, { ok: false, error: error.error }];
        }
        await backOffOrThrow(error, attempts);
      }
    }
  }

  private async runGroup(source: DataSource, group: readonly PendingUnit[]): Promise<UnitResult[]> {
    const runner = source.createQueryRunner();
    let observed = false;
    try {
      await runner.startTransaction();
      await runner.query(TAKE_WRITE_LOCK);
      const own = source.createEntityManager(runner);
      observed = true;
      for (const observer of this.observers) observer.begun(own);
      const started = performance.now();
      const results: UnitResult[] = [];
      for (const [i, unit] of group.entries()) {
        if (i > 0 && performance.now() - started > GROUP_BUDGET_MS) break;
        const manager = source.createEntityManager(runner);
        const hooks = collectCommitHooks(manager);
        try {
          results.push({ ok: true, value: await unit.work(manager), hooks });
          // The units after it wait for the next group, as when the budget runs out.
          if (commitsRightAfter(manager)) break;
        } catch (error) {
          // Another process holding the database: the whole group waits and runs again.
          if (retryLimitOf(error) > 1) throw error;
          throw new UnitFailed(i, error);
        }
      }
      for (const observer of this.observers) observer.committing(own);
      await runner.commitTransaction();
      for (const observer of this.observers) observer.committed();
      return results;
    } catch (error) {
      if (runner.isTransactionActive)
        await runner.rollbackTransaction().catch(() => this.writer.discard(source));
      if (observed) for (const observer of this.observers) observer.rolledBack();
      throw error;
    } finally {
      await runner.release();
    }
  }
}

/** A unit of a group failed: the group's transaction is rolled back (see runGroupWithRetry). */
class UnitFailed extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super(`unit ${index} of the group failed`);
  }
}
