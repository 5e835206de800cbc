import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { DynamicModule, Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { ErrorEnvelopePlugin } from './common/graphql/error-envelope.plugin';
import { formatLoyaltyError } from './common/graphql/format-error';
import { stripProductExtensions } from './common/graphql/strict-schema';
import type { AppConfig } from './config/app-config';
import { LoyaltyModule } from './loyalty.module';
import { resolveDataSourceOptions } from './storage/data-source-options';

export const QUERY_PATH = '/query';

export interface AppModuleExtras {
  /** Sees every SQL statement; tests use it to count queries. */
  typeormLogger?: TypeOrmLogger;
}

/** Our standalone host: the GraphQL and TypeORM roots around {@link LoyaltyModule}. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, extras: AppModuleExtras = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: async () => ({
            ...(await resolveDataSourceOptions(config.database, {
              migrationsRun: config.migrateOnStart,
              logger: extras.typeormLogger,
            })),
            retryAttempts: 3,
            retryDelay: 1000,
          }),
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: ApolloDriver,
          path: QUERY_PATH,
          autoSchemaFile: true,
          sortSchema: true,
          introspection: config.introspection,
          playground: false,
          csrfPrevention: true,
          includeStacktraceInErrorResponses: false,
          // Nest resets the status of any response with `data` to 200; the envelope plugin sets it.
          preserveHttpStatusForExecutionErrors: false,
          formatError: formatLoyaltyError,
          plugins: [new ErrorEnvelopePlugin(), ApolloServerPluginLandingPageDisabled()],
          transformSchema: config.strictMode ? stripProductExtensions : undefined,
          // Apollo's Fastify integration calls the context function with (request, reply).
          context: (req: unknown, reply: unknown) => ({ req, reply }),
        }),
        LoyaltyModule.forRoot({ cursorSecret: config.cursorSecret }),
      ],
    };
  }
}
