import { FactoryProvider, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuthModule } from '../auth/auth.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { SpacesModule } from '../spaces/spaces.module';
import { SpacesService } from '../spaces/spaces.service';
import type { SqlDialect } from '../storage/dialect/sql-dialect';
import { SQL_DIALECT } from '../storage/sql-dialect.provider';
import { ServiceSettingEntity } from '../storage/schema/service-setting.entity';
import { StorageModule } from '../storage/module/storage.module';
import { TransactionRunner } from '../storage/transactions/transaction-runner';
import { BoardChangeFeed } from './changes/board-change-feed';
import { LeaderboardsResolver } from './graphql/leaderboards.resolver';
import { LeaderboardsService } from './graphql/leaderboards.service';
import { BoardEntryEntity } from './ledger/board-entry.entity';
import { BoardTotalsStore } from './ledger/board-totals.store';
import { BoardEntity } from './ledger/board.entity';
import { DirectBoardTotalsStore } from './ledger/direct-board-totals.store';
import { PointsEventEntity } from './ledger/points-event.entity';
import { PointsLedgerService } from './ledger/points-ledger.service';
import { CursorService } from './paging/cursor.service';
import { IndexedBoardReader } from './rank-index/indexed-board-reader';
import { RankIndexService } from './rank-index/rank-index.service';
import { BoardReader } from './read/board-reader';
import { SqlBoardReader } from './read/sql-board-reader';
import { BoardBacklogService } from './backlog/board-backlog.service';

/** Chosen once at start: a backlog where one writer holds the database, direct upserts elsewhere. */
const boardTotalsStoreProvider: FactoryProvider<BoardTotalsStore> = {
  provide: BoardTotalsStore,
  useFactory: (runner: TransactionRunner, dataSource: DataSource, dialect: SqlDialect) => {
    if (!runner.singleWriter) return new DirectBoardTotalsStore(dialect);
    const backlog = new BoardBacklogService(dataSource, runner, dialect);
    runner.observe(backlog);
    return backlog;
  },
  inject: [TransactionRunner, getDataSourceToken(), SQL_DIALECT],
};

@Module({
  imports: [
    TypeOrmModule.forFeature([
      PointsEventEntity,
      BoardEntryEntity,
      BoardEntity,
      ServiceSettingEntity,
    ]),
    AuthModule,
    SpacesModule,
    ProfilesModule,
    StorageModule,
  ],
  providers: [
    boardTotalsStoreProvider,
    CursorService,
    SqlBoardReader,
    BoardChangeFeed,
    RankIndexService,
    { provide: BoardReader, useClass: IndexedBoardReader },
    LeaderboardsService,
    PointsLedgerService,
    LeaderboardsResolver,
  ],
  exports: [
    LeaderboardsService,
    PointsLedgerService,
    BoardReader,
    RankIndexService,
    BoardTotalsStore,
    BoardChangeFeed,
  ],
})
export class LeaderboardsModule {
  constructor(spaces: SpacesService, feed: BoardChangeFeed) {
    // A space made private (or public) changes what answers show: response caches start again.
    spaces.onVisibilityChange(() => feed.noteWrite());
  }
}
