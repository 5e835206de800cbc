import type { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { engineOf } from '../engines';
import { ReadReplicas } from '../replica/read-replicas';
import { TransactionRunner } from '../transactions/transaction-runner';

/** The runner that fits the module's database, chosen once when the module starts. */
export const transactionRunnerProvider: Provider<TransactionRunner> = {
  provide: TransactionRunner,
  useFactory: (dataSource: DataSource, replicas?: ReadReplicas): TransactionRunner =>
    engineOf(dataSource).transactionRunner(dataSource, replicas?.enabled ? replicas : undefined),
  inject: [getDataSourceToken(), ReadReplicas],
};
