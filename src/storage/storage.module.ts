import { Module } from '@nestjs/common';
import { SQL_DIALECT, sqlDialectProvider } from './dialect/sql-dialect.provider';
import { TransactionRunner } from './transactions/transaction-runner';
import { transactionRunnerProvider } from './transaction-runner.provider';

/** What every feature writes and reads through: the SQL dialect and the transaction runner. */
@Module({
  providers: [sqlDialectProvider, transactionRunnerProvider],
  exports: [SQL_DIALECT, TransactionRunner],
})
export class StorageModule {}
