import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LeaderboardsModule } from '../leaderboards/leaderboards.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { QuestsModule } from '../quests/quests.module';
import { SpacesModule } from '../spaces/spaces.module';
import { StorageModule } from '../storage/module/storage.module';
import { IngestController } from './ingest.controller';
import { IngestHttpSetup } from './ingest-http.setup';
import { IngestService } from './ingest.service';

@Module({
  imports: [
    AuthModule,
    SpacesModule,
    ProfilesModule,
    QuestsModule,
    LeaderboardsModule,
    StorageModule,
  ],
  controllers: [IngestController],
  providers: [IngestService, IngestHttpSetup],
  exports: [IngestService],
})
export class IngestModule {}
