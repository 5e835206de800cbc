import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { WriteIsolation } from '../dialect/sql-dialect';
import { collectCommitHooks, runCommitHooks } from './commit-hooks';
import { backOffOrThrow, newAttempts } from './retry-policy';
import { CommitListener, TransactionRunner } from './transaction-runner';

/**
 * One transaction per unit, on a pooled connection (database servers): units run at once, each at
 * the dialect's write isolation (see SqlDialect.writeIsolation), run again whole after a deadlock,
 * a serialization failure or a duplicate key raced in (see retry-policy.ts).
 */
export class PooledTransactionRunner extends TransactionRunner {
  readonly singleWriter = false;
  private readonly logger = new Logger('Transactions');

  /** With a listener (read replicas): each commit is noted before the unit's caller hears of it. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly isolation: WriteIsolation,
    private readonly commits?: CommitListener,
  ) {
    super();
  }

  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const attempts = newAttempts();
    for (;;) {
      let hooks: Array<() => void> = [];
      let result: T;
      try {
        // The dialect's level whatever the server's default (see SqlDialect.writeIsolation).
        result = await this.dataSource.transaction(this.isolation, (manager) => {
          hooks = collectCommitHooks(manager);
          return work(manager);
        });
      } catch (error) {
        await backOffOrThrow(error, attempts);
        continue;
      }
      runCommitHooks(this.logger, hooks);
      // Committed: replica reads now wait until they hold it.
      this.commits?.noteCommit();
      return result;
    }
  }

  observe(): void {
    throw new Error('Observers need a single writer; this database has concurrent writers');
  }

  useLoadHint(): void {}
}
