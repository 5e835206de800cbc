import { Inject, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { dialectOf, SqlDialect } from './sql-dialect';

export const SQL_DIALECT = Symbol('SQL_DIALECT');

/** The dialect of the module's data source, chosen once when the module starts. */
export const sqlDialectProvider: Provider<SqlDialect> = {
  provide: SQL_DIALECT,
  useFactory: (dataSource: DataSource) => dialectOf(dataSource),
  inject: [getDataSourceToken()],
};

/** Injects the module's {@link SqlDialect}. */
export const InjectSqlDialect = (): ParameterDecorator => Inject(SQL_DIALECT);
