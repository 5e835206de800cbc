import { Module } from '@nestjs/common';
import { SQL_DIALECT, sqlDialectProvider } from './dialect/sql-dialect.provider';
import { ReadSnapshots } from './snapshot/read-snapshot';
import { TransactionRunner } from './transactions/transaction-runner';
import { transactionRunnerProvider } from './transaction-runner.provider';

/**
 * What every feature writes and reads through: the SQL dialect, the transaction runner, and read
 * snapshots for reads that must all see one moment.
 */
@Module({
  providers: [sqlDialectProvider, transactionRunnerProvider, ReadSnapshots],
  exports: [SQL_DIALECT, TransactionRunner, ReadSnapshots],
})
export class StorageModule {}
