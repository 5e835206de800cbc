import { Module } from '@nestjs/common';
import { SQL_DIALECT, sqlDialectProvider } from '../sql-dialect.provider';
import { ReadReplicas } from '../replica/read-replicas';
import { ReadSnapshots } from '../snapshot/read-snapshot';
import { TransactionRunner } from '../transactions/transaction-runner';
import { schemaMigrationsProvider } from './schema-migrations.provider';
import { transactionRunnerProvider } from './transaction-runner.provider';

/**
 * What every feature writes and reads through: the SQL dialect, the transaction runner, read
 * snapshots for reads that must all see one moment, and read replicas for reads that may lag.
 * It also applies the migrations at start when the module's options ask for it.
 */
@Module({
  providers: [
    schemaMigrationsProvider,
    sqlDialectProvider,
    transactionRunnerProvider,
    ReadSnapshots,
    ReadReplicas,
  ],
  exports: [SQL_DIALECT, TransactionRunner, ReadSnapshots, ReadReplicas],
})
export class StorageModule {}
