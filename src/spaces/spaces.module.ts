import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { StorageModule } from '../storage/module/storage.module';
import { SpaceEntity } from './space.entity';
import { SpacesResolver } from './spaces.resolver';
import { SpacesService } from './spaces.service';
import { SprintEntity } from './sprint.entity';

@Module({
  imports: [TypeOrmModule.forFeature([SpaceEntity, SprintEntity]), AuthModule, StorageModule],
  providers: [SpacesService, SpacesResolver],
  exports: [SpacesService],
})
export class SpacesModule {}
