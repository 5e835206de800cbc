import { Module } from '@nestjs/common';
import { SQL_DIALECT, sqlDialectProvider } from '../sql-dialect.provider';
import { ReadReplicas } from '../replica/read-replicas';
import { ReadSnapshots } from '../snapshot/read-snapshot';
import { TransactionRunner } from '../transactions/transaction-runner';
import { transactionRunnerProvider } from './transaction-runner.provider';

/**
 * What every feature writes and reads through: the SQL dialect, the transaction runner, read
 * snapshots for reads that must all see one moment, and read replicas for reads that may lag.
 */
@Module({
  providers: [sqlDialectProvider, transactionRunnerProvider, ReadSnapshots, ReadReplicas],
  exports: [SQL_DIALECT, TransactionRunner, ReadSnapshots, ReadReplicas],
})
export class StorageModule {}
