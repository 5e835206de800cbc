import type { ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { DynamicModule, Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { MigrationLockTimeout, runMigrationsLocked } from '../storage/connection/run-migrations';
import type { LoyaltyObserver } from '../options/loyalty-module-options.interface';
import { ErrorEnvelopePlugin } from '../common/graphql/error-envelope.plugin';
import { formatLoyaltyError } from '../common/graphql/format-error';
import { QueryLimitsPlugin } from './graphql/query-limits.plugin';
import { OperationLabelPlugin } from './metrics/operation-label.plugin';
import { applySchemaProfile } from '../common/graphql/schema-profile';
import type { AppConfig } from './config/app-config';
import { DashboardModule } from './dashboard/dashboard.module';
import { HealthModule } from './health/health.module';
import { LoyaltyModule } from '../loyalty.module';
import { IngestLoad } from './http/ingest-load';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { hostDataSourceOptions } from './config/host-data-source';

export const QUERY_PATH = '/query';

export interface AppModuleExtras {
  /**
   * Sees every SQL statement that goes through TypeORM (on SQLite, not the ledger's row-by-row
   * writes: see nativeSqlite); tests use it to count queries.
   */
  typeormLogger?: TypeOrmLogger;
  /** More Apollo plugins, after ours (the page benchmark tries compiled execution with one). */
  apolloPlugins?: ApolloServerPlugin[];
  /** Told of the module's work (the service's metrics, when they are on). */
  observer?: LoyaltyObserver;
  /** Label each /query request with its operation, for the request log line and metrics. */
  labelOperations?: boolean;
}

/** Our standalone host: the GraphQL and TypeORM roots around {@link LoyaltyModule}. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, extras: AppModuleExtras = {}): DynamicModule {
    const rateLimit = RateLimitModule.forRoot(config.redisUrl);
    const loyalty = LoyaltyModule.forRoot({
      cursorSecret: config.cursorSecret,
      ingestMaxRecords: config.ingest.maxRecords,
      rankIndex: config.rankIndex,
      boardExport: { maxConcurrent: config.boardExport.maxConcurrent },
      observer: extras.observer,
      readReplicas: config.databaseReplicas.map((replica) => ({
        host: replica.host,
        port: replica.port,
        user: replica.username,
        password: replica.password,
        database: replica.database,
        tls: replica.tls,
      })),
    });
    return {
      module: AppModule,
      providers: [IngestLoad],
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: async () => ({
            ...(await hostDataSourceOptions(config.database, {
              logger: extras.typeormLogger,
            })),
            retryAttempts: 3,
            retryDelay: 1000,
            // Another process still migrating after 10 minutes is not a blip to retry.
            toRetry: (error: unknown) => !(error instanceof MigrationLockTimeout),
          }),
          // Migrations at start run one instance at a time (runMigrationsLocked), not in
          // initialize(): instances started together would each run them.
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            if (config.migrateOnStart) {
              try {
                await runMigrationsLocked(dataSource);
              } catch (error) {
                await dataSource.destroy().catch(() => undefined);
                throw error;
              }
            }
            return dataSource;
          },
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: ApolloDriver,
          path: QUERY_PATH,
          // Apollo's stop closes the HTTP server: after beforeApplicationShutdown, so the host
          // knows it is shutting down (ShutdownState) before the listener closes.
          stopOnApplicationShutdown: true,
          autoSchemaFile: true,
          sortSchema: true,
          introspection: config.introspection,
          playground: false,
          csrfPrevention: true,
          allowBatchedHttpRequests: false,
          includeStacktraceInErrorResponses: false,
          // Nest resets the status of any response with `data` to 200; the envelope plugin sets it.
          preserveHttpStatusForExecutionErrors: false,
          parseOptions: { maxTokens: config.limits.maxTokens },
          formatError: formatLoyaltyError,
          plugins: [
            new QueryLimitsPlugin(config.limits),
            // Labels the request with its root field, for its log line and metrics.
            ...(extras.labelOperations ? [new OperationLabelPlugin()] : []),
            // Apollo's default cache-control plugin (we set no hints) uses willResolveField, which
            // wraps every field of every request. No plugin here may use it (see the schema spec).
            ApolloServerPluginCacheControlDisabled(),
            new ErrorEnvelopePlugin(),
            config.graphqlIde
              ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false })
              : ApolloServerPluginLandingPageDisabled(),
            ...(extras.apolloPlugins ?? []),
          ],
          transformSchema: applySchemaProfile(config.schemaProfile),
          // Apollo's Fastify integration calls the context function with (request, reply).
          context: (req: unknown, reply: unknown) => ({ req, reply }),
        }),
        loyalty,
        rateLimit,
        DashboardModule.forRoot(loyalty, rateLimit),
        HealthModule.forRoot({ statementTimeoutMs: config.requestTimeoutMs }, rateLimit),
      ],
    };
  }
}
