import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { BoardExportModule } from './export/board-export.module';
import { IngestModule } from './ingest/ingest.module';
import { LeaderboardsModule } from './leaderboards/leaderboards.module';
import type { LoyaltyModuleOptions } from './options/loyalty-module-options.interface';
import {
  LOYALTY_ASYNC_OPTIONS_TYPE,
  LoyaltyOptionsModule,
} from './options/loyalty.module-definition';
import { ProfilesModule } from './profiles/profiles.module';
import { QuestsModule } from './quests/quests.module';
import { SpacesModule } from './spaces/spaces.module';
import { StorageModule } from './storage/module/storage.module';

// Storage first: Nest shuts modules down in reverse order, so the runner drains last.
const FEATURES = [
  StorageModule,
  AuthModule,
  SpacesModule,
  ProfilesModule,
  QuestsModule,
  LeaderboardsModule,
  IngestModule,
  BoardExportModule,
];

/**
 * The loyalty leaderboard service as a module: its features (spaces, profiles, quests,
 * leaderboards, auth, ingest, each a module of its own), their resolvers, services and entities.
 * The host owns the GraphQL root (code-first), the TypeORM root (with {@link LOYALTY_ENTITIES} and
 * {@link LOYALTY_MIGRATIONS}) and any app-wide guards and filters; this module registers none. Its
 * HTTP routes are guarded by the access-token guard and answer their refusals in the error
 * envelope, on Express or Fastify: POST /ingest (scope `ingest`) reads JSON arrays and NDJSON by
 * itself; GET /export (scope `query`) streams a whole board as of one moment.
 * Register it once per application: its options are global to its feature modules.
 *
 * ```ts
 * @Module({ imports: [TypeOrmModule.forRoot({ ..., autoLoadEntities: true, migrations: LOYALTY_MIGRATIONS }),
 *   GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true,
 *     transformSchema: applySchemaProfile('extended') }),
 *   LoyaltyModule.forRoot({ cursorSecret: process.env.CURSOR_SECRET })] })
 * export class HostModule {}
 * ```
 *
 * The schema profile (docs/api.md, Schema profiles) is the host's choice: `applySchemaProfile`
 * ('spec', 'extended' or 'galxe') as `transformSchema`; without one the host serves the widest,
 * `galxe`'s.
 */
@Module({ imports: FEATURES, exports: FEATURES })
export class LoyaltyModule {
  static forRoot(options: LoyaltyModuleOptions = {}): DynamicModule {
    return { module: LoyaltyModule, imports: [LoyaltyOptionsModule.forRoot(options)] };
  }

  static forRootAsync(options: typeof LOYALTY_ASYNC_OPTIONS_TYPE): DynamicModule {
    return { module: LoyaltyModule, imports: [LoyaltyOptionsModule.forRootAsync(options)] };
  }
}
