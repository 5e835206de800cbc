import { Inject, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { resolveDialect } from './engines';
import type { SqlDialect } from './dialect/sql-dialect';

export const SQL_DIALECT = Symbol('SQL_DIALECT');

/** The dialect of the module's data source, chosen once when the module starts, by its server. */
export const sqlDialectProvider: Provider<SqlDialect> = {
  provide: SQL_DIALECT,
  useFactory: (dataSource: DataSource) => resolveDialect(dataSource),
  inject: [getDataSourceToken()],
};

/** Injects the module's {@link SqlDialect}. */
export const InjectSqlDialect = (): ParameterDecorator => Inject(SQL_DIALECT);
