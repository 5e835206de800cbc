import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LeaderboardsModule } from '../leaderboards/leaderboards.module';
import { SpacesModule } from '../spaces/spaces.module';
import { StorageModule } from '../storage/module/storage.module';
import { BoardExportController } from './board-export.controller';
import { BoardExportService } from './board-export.service';

/** GET /export: whole boards as of one moment (see BoardExportService). */
@Module({
  imports: [AuthModule, SpacesModule, LeaderboardsModule, StorageModule],
  controllers: [BoardExportController],
  providers: [BoardExportService],
  exports: [BoardExportService],
})
export class BoardExportModule {}
