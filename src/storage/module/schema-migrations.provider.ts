import { Logger, type Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import {
  LOYALTY_MODULE_OPTIONS,
  LOYALTY_OPTIONS_CHECKED,
} from '../../options/loyalty.module-definition';
import { runMigrationsLocked } from '../connection/run-migrations';

/** Resolved once the module's schema is migrated (or migrations are left to the host). */
export const SCHEMA_MIGRATED = Symbol('SCHEMA_MIGRATED');

/**
 * Runs the data source's migrations under the database's migration lock when the module's
 * `migrationsRun` asks for it. Nest creates every provider before it calls any module's start
 * hooks, so nothing of the module reads a table before they are applied.
 */
export const schemaMigrationsProvider: Provider<void> = {
  provide: SCHEMA_MIGRATED,
  useFactory: async (dataSource: DataSource, options: LoyaltyModuleOptions): Promise<void> => {
    if (dataSource.options.migrationsRun) {
      new Logger('LoyaltyModule').warn(
        'The TypeORM data source has migrationsRun: true, which applies migrations with no lock: ' +
          'instances started together on a fresh database can each run them and break it. Remove ' +
          'it and give LoyaltyModule.forRoot({ migrationsRun: true }) instead.',
      );
    }
    if (options.migrationsRun) await runMigrationsLocked(dataSource, { transaction: 'each' });
  },
  // After the options' check: a host whose options are refused changes nothing in its database.
  inject: [getDataSourceToken(), LOYALTY_MODULE_OPTIONS, LOYALTY_OPTIONS_CHECKED],
};
