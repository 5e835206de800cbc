import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { ReadReplicas } from '../replica/read-replicas';
import { collectCommitHooks, runCommitHooks } from './commit-hooks';
import { backOffOrThrow, newAttempts } from './retry-policy';
import { TransactionRunner } from './transaction-runner';

/** One transaction per unit, on a pooled connection (MySQL/MariaDB): units run at once. */
export class PooledTransactionRunner extends TransactionRunner {
  readonly singleWriter = false;
  private readonly logger = new Logger('Transactions');

  /** With replicas: each commit is noted before the unit's caller hears of it. */
  constructor(
    private readonly dataSource: DataSource,
    private readonly replicas?: ReadReplicas,
  ) {
    super();
  }

  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const attempts = newAttempts();
    for (;;) {
      let hooks: Array<() => void> = [];
      let result: T;
      try {
        // REPEATABLE READ whatever the server's default, since totals are read under FOR UPDATE
        // and rewritten, and only its gap locks keep two first deliveries for the same new
        // address apart.
        result = await this.dataSource.transaction('REPEATABLE READ', (manager) => {
          hooks = collectCommitHooks(manager);
          return work(manager);
        });
      } catch (error) {
        await backOffOrThrow(error, attempts);
        continue;
      }
      runCommitHooks(this.logger, hooks);
      // Committed: replica reads now wait until they hold it.
      this.replicas?.noteCommit();
      return result;
    }
  }

  observe(): void {
    throw new Error('Observers need a single writer; this database has concurrent writers');
  }

  useLoadHint(): void {}
}
