import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { dialectOf } from '../dialect/sql-dialect';

const commitHooks = new WeakMap<EntityManager, Array<() => void>>();

/**
 * Runs `hook` once the transaction of `manager` has committed, and never if it rolls back (or if
 * the manager is not one of TransactionRunner's): for caches of what is known to be stored.
 */
export function afterCommit(manager: EntityManager, hook: () => void): void {
  commitHooks.get(manager)?.push(hook);
}

/**
 * Told of each SQLite write transaction's life (see TransactionRunner.observe), for state kept
 * beside the database that must follow its commits exactly. Every call is made on the writer
 * connection, between the others' calls, in this order: begun, then committing and committed, or
 * rolledBack (from any point, also after a failed commit).
 */
export interface TransactionObserver {
  /** The transaction holds the write lock and nothing of it has run yet. May read and write. */
  begun(manager: EntityManager): void;
  /** Its last unit has run; the commit comes next. May read and write. */
  committing(manager: EntityManager): void;
  committed(): void;
  rolledBack(): void;
}

/** Errors after which the whole unit of work runs again. */
const RETRYABLE: Record<string, number> = {
  ER_LOCK_DEADLOCK: 5,
  ER_LOCK_WAIT_TIMEOUT: 5,
  // A duplicate key raced in by another writer: it has committed (the insert waited for it), and
  // the re-run sees its row. Concurrent deliveries of overlapping batches race a unit again on a
  // key of each writer it meets, so a re-run may meet another; a key met twice is a real
  // conflict, not a race (see backOffOrThrow).
  ER_DUP_ENTRY: 20,
  // Another process held SQLite's write lock past busy_timeout, which TAKE_WRITE_LOCK waits for
  // (reported as BUSY_SNAPSHOT when that process committed meanwhile): wait and run again.
  SQLITE_BUSY: 20,
  SQLITE_BUSY_SNAPSHOT: 20,
};

/** Codes whose attempts count together: the same kind of wait, met in another form. */
const RETRY_FAMILY: Record<string, string> = {
  ER_LOCK_WAIT_TIMEOUT: 'ER_LOCK_DEADLOCK',
  SQLITE_BUSY_SNAPSHOT: 'SQLITE_BUSY',
};

/**
 * SQLite: the first statement of every write transaction, which takes the database's write lock
 * and changes nothing (service_settings is a table of the module's schema). TypeORM begins
 * transactions DEFERRED, so a unit that read first took the lock at its first write, and SQLite
 * answers that at once with SQLITE_BUSY when another connection holds it (it waits busy_timeout
 * only for a transaction's first statement), or when another connection committed since the
 * unit's first read. An import (a transaction of seconds, that reads every key of its batch
 * before it writes) racing a live POST /ingest failed that way after its retries, at 50,000
 * records per transaction as at 200,000. With the lock taken first, each side waits for the
 * other's transaction (busy_timeout, then the runner's retries).
 */
const TAKE_WRITE_LOCK = 'DELETE FROM service_settings WHERE 0';

/** Units of work run together in one SQLite transaction, at most. */
const MAX_GROUP = 16;
/**
 * A group takes no further unit once it has run this long: the units waiting behind it commit in
 * the next one. A unit's answer waits for the others of its group about this long, plus one
 * unit and the commit (and the group's re-runs, should another process hold the database).
 */
const GROUP_BUDGET_MS = 200;
/**
 * A group smaller than the number of requests recently in flight at once waits at most this long
 * for theirs to join (see enterRequest). Clients that send their next request once answered
 * (scripts feeding a file) otherwise form groups of about half of them: the answered ones' next
 * requests arrive a few milliseconds after the next group started. A commit writes every page the
 * group dirtied, all over the boards' indexes, so a group of four 1,000-record requests costs
 * little more to commit than one of two.
 */
const COMMIT_DELAY_MS = 20;
/**
 * How long a client whose request was answered counts as in flight still, on a connection kept
 * open, unless its next request comes first. A group's requests are answered together, after its
 * commit, and no request is read while its statements run (the event loop does not turn): a
 * request sent meanwhile is read after the group's answers went out, so it never overlapped with
 * them. Counting only requests between their headers and their answer, four clients feeding a
 * file looked like three (measured: groups of three, now and then two).
 */
const RETURN_MS = COMMIT_DELAY_MS;
/** How long a peak of requests in flight is remembered: between one and two of these. */
const PEAK_WINDOW_MS = 1_000;

interface PendingUnit {
  work: (manager: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type UnitResult =
  { ok: true; value: unknown; hooks: Array<() => void> } | { ok: false; error: unknown };

/**
 * Runs write transactions: each unit either commits whole or leaves nothing behind, and a retry
 * re-runs the whole unit (on SQLite, its whole group), which re-reads what it needs.
 *
 * SQLite: TypeORM's better-sqlite3 driver has one connection, and a transaction on it would
 * swallow every other statement of the process (readers would see uncommitted rows, and a token
 * created meanwhile would roll back with it). So writes get a connection of their own, and units
 * run on it one after another; readers on the main connection keep seeing the last commit (WAL).
 *
 * Group commit (SQLite): units that queue up while the writer is busy run one after another in a
 * single transaction. A commit writes every page the transaction touched, and concurrent ingest
 * requests touch many of the same pages (the boards' indexes), so fewer, larger commits write
 * less per record. A unit that fails takes the transaction down with it: the units before it run
 * again without it and commit, it fails alone, and the units after it go to the next group.
 * Failures are rare (a refused record is an answer, not a failure), so this costs less than
 * savepoints would: under a savepoint SQLite keeps a copy of every page the unit touches, in
 * memory, and each statement that updates rows costs about 50 us more, which the row-by-row
 * writes of the ledger (see nativeSqlite) cannot afford.
 */
@Injectable()
export class TransactionRunner implements OnApplicationShutdown {
  private readonly logger = new Logger('Transactions');
  private readonly pending: PendingUnit[] = [];
  /** Set while drain() runs; cleared in the same step that finds nothing pending. */
  private draining?: Promise<void>;
  private writer?: Promise<DataSource>;
  /** Requests in flight (see enterRequest), and their peak in this window and the one before. */
  private inFlight = 0;
  /** Clients answered lately that may be back (see RETURN_MS), by when, oldest first. */
  private readonly returning = new Map<object, number>();
  private peak = { now: 0, before: 0, windowStart: 0 };
  /**
   * After a wait for company ran out: the units that had come, taken as the number of clients for
   * a PEAK_WINDOW_MS. A client may send its next request on another of its connections (fetch's
   * pool does), and the one it left then counts as a client still to come (see RETURN_MS).
   */
  private ceiling = { clients: MAX_GROUP, until: 0 };
  /** Wakes a drain() that waits for more units. */
  private wake?: () => void;
  private readonly observers: TransactionObserver[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Whether units run at once really proceed at once: on MySQL/MariaDB each has a connection of
   * its own; SQLite has one writer, and they run one after another.
   */
  get concurrentWriters(): boolean {
    return dialectOf(this.dataSource) !== 'sqlite';
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.concurrentWriters) return this.withRetry(this.dataSource, work);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.draining ??= this.drain();
      this.wake?.();
    });
  }

  /** SQLite: tells `observer` of every write transaction from now on (see TransactionObserver). */
  observe(observer: TransactionObserver): void {
    this.observers.push(observer);
  }

  /**
   * A request that will queue a unit is in flight, from its headers to its answer (an ingest
   * request): call the answer when it ends. While requests come several at a time, a group
   * smaller than their recent peak waits up to COMMIT_DELAY_MS for more units. `client` is the
   * request's connection, if it may carry the client's next request: the client then counts as in
   * flight for RETURN_MS after the answer, or until clientGone. MySQL/MariaDB, where units do not
   * share transactions, keep no count.
   */
  enterRequest(client?: object): () => void {
    if (this.concurrentWriters) return () => undefined;
    if (client) this.returning.delete(client);
    this.inFlight++;
    this.recentPeak();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight--;
      if (!client) return;
      // Deleted first: set() would keep the place of a client that is still in the map.
      this.returning.delete(client);
      this.returning.set(client, performance.now());
    };
  }

  /** The client's connection closed: no request of it is coming on it (see enterRequest). */
  clientGone(client: object): void {
    this.returning.delete(client);
  }

  /** Requests in flight now (see enterRequest); 0 on MySQL/MariaDB, which keep no count. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /**
   * The most requests in flight at once, recently (in this window or the one before), counting
   * the clients answered in the last RETURN_MS that are not back yet (see enterRequest).
   */
  private recentPeak(): number {
    const now = performance.now();
    // In the order they were answered: a client is deleted when it comes back.
    for (const [client, answeredAt] of this.returning) {
      if (now - answeredAt <= RETURN_MS) break;
      this.returning.delete(client);
    }
    if (now - this.peak.windowStart >= PEAK_WINDOW_MS) {
      // Two windows late: no request entered in the one that just ended, so it leaves no peak.
      const idle = now - this.peak.windowStart >= 2 * PEAK_WINDOW_MS;
      this.peak = { now: 0, before: idle ? 0 : this.peak.now, windowStart: now };
    }
    this.peak.now = Math.max(this.peak.now, this.inFlight + this.returning.size);
    const peak = Math.max(this.peak.now, this.peak.before);
    // The ceiling lowers the guess, never the requests seen in flight now.
    if (now >= this.ceiling.until) return peak;
    return Math.max(this.inFlight, Math.min(peak, this.ceiling.clients));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.draining;
    const writer = await this.writer?.catch(() => undefined);
    this.writer = undefined;
    if (writer?.isInitialized && writer !== this.dataSource) await writer.destroy();
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
      // and join the group. Then, if requests come several at a time, those of the others;
      // units left over by the last group have waited long enough.
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

  /** Until as many units are pending as requests were recently in flight, or COMMIT_DELAY_MS. */
  private async awaitCompany(): Promise<void> {
    const until = performance.now() + COMMIT_DELAY_MS;
    for (;;) {
      const left = until - performance.now();
      const company = Math.min(MAX_GROUP, this.recentPeak());
      if (this.pending.length >= company) return;
      if (left <= 0) {
        this.ceiling = {
          clients: Math.max(1, this.pending.length),
          until: performance.now() + PEAK_WINDOW_MS,
        };
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
    this.runHooks(result.hooks);
    unit.resolve(result.value);
  }

  /** A hook that fails is logged: its unit is committed all the same, and the others run. */
  private runHooks(hooks: ReadonlyArray<() => void>): void {
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        this.logger.error(
          `A commit hook failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  private writerSource(): Promise<DataSource> {
    const file = (this.dataSource.options as { database?: unknown }).database;
    // An in-memory database exists once per connection: there is no second one to open.
    if (file === ':memory:') return Promise.resolve(this.dataSource);
    if (!this.writer) {
      this.writer = new DataSource({
        ...this.dataSource.options,
        migrationsRun: false,
      }).initialize();
      this.writer.catch(() => (this.writer = undefined));
    }
    return this.writer;
  }

  /**
   * Answers the results of the group's first units, in order: all of them, as many as ran within
   * GROUP_BUDGET_MS, or those up to a failed unit. A failure of the group as a whole (a retryable
   * one that persists, or the commit) fails every unit of the group, those its last attempt did
   * not reach included.
   */
  private async runGroupWithRetry(group: readonly PendingUnit[]): Promise<UnitResult[]> {
    const attempts = newAttempts();
    for (;;) {
      try {
        return await this.runGroup(await this.writerSource(), group);
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
        await this.backOffOrThrow(error, attempts);
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
        const hooks: Array<() => void> = [];
        commitHooks.set(manager, hooks);
        try {
          results.push({ ok: true, value: await unit.work(manager), hooks });
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
        await runner.rollbackTransaction().catch(() => this.discardWriter(source));
      if (observed) for (const observer of this.observers) observer.rolledBack();
      throw error;
    } finally {
      await runner.release();
    }
  }

  /**
   * SQLite rolled the transaction back itself (a full disk, an I/O error), so TypeORM's ROLLBACK
   * failed and left its query runner, one per connection, believing a transaction is open: the
   * next group would run in a savepoint of nothing and never commit. The writer is closed, and
   * the next group opens another. (An in-memory database has only the one connection.)
   */
  private async discardWriter(source: DataSource): Promise<void> {
    if (source === this.dataSource) return;
    this.writer = undefined;
    await source.destroy().catch(() => undefined);
  }

  /** MySQL/MariaDB: one transaction per unit, on a pooled connection. */
  private async withRetry<T>(
    source: DataSource,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    const attempts = newAttempts();
    for (;;) {
      const committed: Array<() => void> = [];
      try {
        // REPEATABLE READ whatever the server's default, since totals are read under FOR UPDATE
        // and rewritten, and only its gap locks keep two first deliveries for the same new
        // address apart.
        const result = await source.transaction('REPEATABLE READ', (manager) => {
          commitHooks.set(manager, committed);
          return work(manager);
        });
        this.runHooks(committed);
        return result;
      } catch (error) {
        await this.backOffOrThrow(error, attempts);
      }
    }
  }

  /**
   * Waits before another attempt, or throws the error when it is not retried (again). Attempts
   * are counted per kind of error: deadlocks first do not use up a duplicate key's re-runs. A
   * duplicate key that an earlier attempt met too is thrown at once.
   */
  private async backOffOrThrow(error: unknown, attempts: Attempts): Promise<void> {
    const code = codeOf(error) ?? '';
    const family = RETRY_FAMILY[code] ?? code;
    const attempt = (attempts.byFamily.get(family) ?? 0) + 1;
    attempts.byFamily.set(family, attempt);
    if (attempt >= retryLimitOf(error)) throw error;
    const entry = code === 'ER_DUP_ENTRY' ? duplicateEntryOf(error) : undefined;
    if (entry !== undefined) {
      if (attempts.duplicates.has(entry)) throw error;
      attempts.duplicates.add(entry);
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(250, 5 * 2 ** attempt) + Math.random() * 20),
    );
  }
}

/** A unit's failed attempts so far, by kind of error, and the duplicate keys they met. */
interface Attempts {
  byFamily: Map<string, number>;
  duplicates: Set<string>;
}

const newAttempts = (): Attempts => ({ byFamily: new Map(), duplicates: new Set() });

/** A unit of a group failed: the group's transaction is rolled back (see runGroupWithRetry). */
class UnitFailed extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super(`unit ${index} of the group failed`);
  }
}

/** How many attempts a unit gets when it fails with this error (1: no retry). */
function retryLimitOf(error: unknown): number {
  const code = codeOf(error);
  return code ? (RETRYABLE[code] ?? 1) : 1;
}

/**
 * The key and index of a duplicate-key error ("Duplicate entry 'k' for key 'PRIMARY'"), or
 * undefined when they cannot tell keys apart: MySQL/MariaDB show the first 61-64 characters of a
 * key (MariaDB ends a cut one with "..."), and keys sharing those are not the same key.
 */
function duplicateEntryOf(error: unknown): string | undefined {
  const e = error as { message?: unknown; driverError?: { sqlMessage?: unknown } };
  const message = String(e.driverError?.sqlMessage ?? e.message);
  const shown = /^Duplicate entry '(.*)' for key /s.exec(message)?.[1];
  return shown !== undefined && shown.length < 61 ? message : undefined;
}

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e.driverError?.code ?? e.code;
  return typeof code === 'string' ? code : undefined;
}
