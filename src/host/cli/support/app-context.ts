import { runMigrationsLocked } from '../../../storage/connection/run-migrations';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../config/app-config';
import { CliModule } from './cli.module';
import { UsageError } from './cli-args';

/** The command line's Nest context: the database and the module's services, quiet but for errors. */
export const createCliContext = (config: AppConfig): Promise<INestApplicationContext> =>
  NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: ['error', 'warn'] });

export const dataSourceOf = (app: INestApplicationContext): DataSource =>
  app.get<DataSource>(getDataSourceToken());

/**
 * Runs `work` in a fresh context, after applying pending migrations (or, with `migrate: false`,
 * refusing a database that has some), and closes it.
 */
export async function withContext<T>(
  config: AppConfig,
  work: (app: INestApplicationContext) => Promise<T>,
  { migrate = true }: { migrate?: boolean } = {},
): Promise<T> {
  const app = await createCliContext(config);
  let result: T;
  try {
    const source = dataSourceOf(app);
    if (migrate) await runMigrationsLocked(source, { transaction: 'each' });
    else if (await source.showMigrations())
      throw new UsageError('the database has pending migrations: run "migrate" first');
    result = await work(app);
  } catch (error) {
    // A database that failed the work may fail the close too: the work's error is the one to tell.
    await app.close().catch(() => undefined);
    throw error;
  }
  await app.close();
  return result;
}
