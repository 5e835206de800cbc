import type { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { dialectOf } from './dialect/sql-dialect';
import { ReadReplicas } from './replica/read-replicas';
import { GroupCommitTransactionRunner } from './sqlite/group-commit-transaction-runner';
import { PooledTransactionRunner } from './transactions/pooled-transaction-runner';
import { TransactionRunner } from './transactions/transaction-runner';

/** The runner that fits the module's database, chosen once when the module starts. */
export const transactionRunnerProvider: Provider<TransactionRunner> = {
  provide: TransactionRunner,
  useFactory: (dataSource: DataSource, replicas?: ReadReplicas): TransactionRunner =>
    dialectOf(dataSource).kind === 'sqlite'
      ? new GroupCommitTransactionRunner(dataSource)
      : new PooledTransactionRunner(dataSource, replicas?.enabled ? replicas : undefined),
  inject: [getDataSourceToken(), ReadReplicas],
};
