import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { SpacesModule } from '../spaces/spaces.module';
import { StorageModule } from '../storage/module/storage.module';
import { CampaignsResolver } from './campaigns.resolver';
import { QuestParticipantEntity } from './quest-participant.entity';
import { QuestEntity } from './quest.entity';
import { QuestsResolver } from './quests.resolver';
import { QuestsService } from './quests.service';
import { SpaceCampaignsResolver } from './space-campaigns.resolver';

@Module({
  imports: [
    TypeOrmModule.forFeature([QuestEntity, QuestParticipantEntity]),
    AuthModule,
    SpacesModule,
    ProfilesModule,
    StorageModule,
  ],
  providers: [QuestsService, QuestsResolver, CampaignsResolver, SpaceCampaignsResolver],
  exports: [QuestsService],
})
export class QuestsModule {}
