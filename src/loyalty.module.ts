import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessTokenGuard } from './auth/access-token.guard';
import { AccessTokensService } from './auth/access-tokens.service';
import { IngestController } from './ingest/ingest.controller';
import { IngestService } from './ingest/ingest.service';
import { BoardBacklogService } from './leaderboards/sqlite-backlog/board-backlog.service';
import { BoardReader } from './leaderboards/read/board-reader';
import { CursorService } from './leaderboards/paging/cursor.service';
import { LeaderboardsResolver } from './leaderboards/graphql/leaderboards.resolver';
import { LeaderboardsService } from './leaderboards/graphql/leaderboards.service';
import { LoyaltyPointsRankResolver } from './leaderboards/graphql/loyalty-points-rank.resolver';
import { PointsLedgerService } from './leaderboards/ledger/points-ledger.service';
import { BoardChangeFeed } from './leaderboards/changes/board-change-feed';
import { IndexedBoardReader } from './leaderboards/rank-index/indexed-board-reader';
import { RankIndexService } from './leaderboards/rank-index/rank-index.service';
import { SqlBoardReader } from './leaderboards/read/sql-board-reader';
import { LOYALTY_ENTITIES } from './loyalty.entities';
import { LoyaltyConfigurableModule } from './options/loyalty.module-definition';
import { ProfilesService } from './profiles/profiles.service';
import { QuestsResolver } from './quests/quests.resolver';
import { QuestsService } from './quests/quests.service';
import { SpacesResolver } from './spaces/spaces.resolver';
import { SpacesService } from './spaces/spaces.service';
import { TransactionRunner } from './storage/transactions/transaction-runner';

/**
 * The loyalty leaderboard service as a module: its resolvers, services and entities. The host
 * owns the GraphQL root (code-first), the TypeORM root (with {@link LOYALTY_ENTITIES} and
 * {@link LOYALTY_MIGRATIONS}) and any app-wide guards and filters; this module registers none. Its
 * one HTTP route, POST /ingest, is guarded by the access-token guard (scope `ingest`); for NDJSON
 * bodies the host registers a text parser for `application/x-ndjson` (JSON arrays need none).
 *
 * One Nest module holds the features (spaces, leaderboards, quests, profiles, auth, ingest, each in
 * its own folder), so that its options reach every feature without a global provider.
 *
 * ```ts
 * @Module({ imports: [TypeOrmModule.forRoot({ ..., autoLoadEntities: true, migrations: LOYALTY_MIGRATIONS }),
 *   GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
 *   LoyaltyModule.forRoot({ cursorSecret: process.env.CURSOR_SECRET })] })
 * export class HostModule {}
 * ```
 */
@Module({
  imports: [TypeOrmModule.forFeature(LOYALTY_ENTITIES)],
  controllers: [IngestController],
  providers: [
    TransactionRunner,
    SpacesService,
    ProfilesService,
    QuestsService,
    CursorService,
    BoardBacklogService,
    SqlBoardReader,
    BoardChangeFeed,
    RankIndexService,
    { provide: BoardReader, useClass: IndexedBoardReader },
    LeaderboardsService,
    PointsLedgerService,
    IngestService,
    AccessTokensService,
    AccessTokenGuard,
    SpacesResolver,
    QuestsResolver,
    LeaderboardsResolver,
    LoyaltyPointsRankResolver,
  ],
  exports: [
    SpacesService,
    ProfilesService,
    QuestsService,
    LeaderboardsService,
    PointsLedgerService,
    IngestService,
    AccessTokensService,
    AccessTokenGuard,
    BoardReader,
    RankIndexService,
    BoardBacklogService,
  ],
})
export class LoyaltyModule extends LoyaltyConfigurableModule {}
