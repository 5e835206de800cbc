import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { dialectOf } from './sql-dialect';

const commitHooks = new WeakMap<EntityManager, Array<() => void>>();

/**
 * Runs `hook` once the transaction of `manager` has committed, and never if it rolls back (or if
 * the manager is not one of TransactionRunner's): for caches of what is known to be stored.
 */
export function afterCommit(manager: EntityManager, hook: () => void): void {
  commitHooks.get(manager)?.push(hook);
}

/** Errors after which the whole unit of work runs again. */
const RETRYABLE: Record<string, number> = {
  ER_LOCK_DEADLOCK: 5,
  ER_LOCK_WAIT_TIMEOUT: 5,
  // A duplicate key raced in by another writer resolves on the first re-run (the unit then sees
  // the committed row); one that persists is a real conflict, not a race.
  ER_DUP_ENTRY: 2,
  // Another process holds SQLite's write lock past busy_timeout, or a deferred transaction could
  // not upgrade its lock: wait and run again.
  SQLITE_BUSY: 20,
  SQLITE_BUSY_SNAPSHOT: 20,
};

/**
 * Runs write transactions: each unit either commits whole or leaves nothing behind, and a retry
 * re-runs the whole unit, which re-reads what it needs.
 *
 * SQLite: TypeORM's better-sqlite3 driver has one connection, and a transaction on it would
 * swallow every other statement of the process (readers would see uncommitted rows, and a token
 * created meanwhile would roll back with it). So writes get a connection of their own, queued here
 * one at a time; readers on the main connection keep seeing the last commit (WAL).
 */
@Injectable()
export class TransactionRunner implements OnApplicationShutdown {
  private queue: Promise<unknown> = Promise.resolve();
  private writer?: Promise<DataSource>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (dialectOf(this.dataSource) !== 'sqlite') return this.withRetry(this.dataSource, work);
    const next = this.queue.then(async () => this.withRetry(await this.writerSource(), work));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async onApplicationShutdown(): Promise<void> {
    const writer = await this.writer?.catch(() => undefined);
    if (writer?.isInitialized && writer !== this.dataSource) await writer.destroy();
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

  private async withRetry<T>(
    source: DataSource,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const committed: Array<() => void> = [];
      try {
        // MySQL: REPEATABLE READ whatever the server's default, since totals are read under
        // FOR UPDATE and rewritten, and only its gap locks keep two first deliveries for the
        // same new address apart.
        const isolation = dialectOf(source) === 'mysql' ? 'REPEATABLE READ' : undefined;
        const unit = (manager: EntityManager) => {
          commitHooks.set(manager, committed);
          return work(manager);
        };
        const result = await (isolation
          ? source.transaction(isolation, unit)
          : source.transaction(unit));

        for (const hook of committed) hook();
        return result;
      } catch (error) {
        const code = codeOf(error);
        const limit = code ? (RETRYABLE[code] ?? 1) : 1;
        if (attempt >= limit) throw error;
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(250, 5 * 2 ** attempt) + Math.random() * 20),
        );
      }
    }
  }
}

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e.driverError?.code ?? e.code;
  return typeof code === 'string' ? code : undefined;
}
