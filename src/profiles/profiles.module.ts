import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { StorageModule } from '../storage/module/storage.module';
import { ProfileEntity } from './profile.entity';
import { ProfilesService } from './profiles.service';

@Module({
  imports: [TypeOrmModule.forFeature([ProfileEntity]), StorageModule],
  providers: [ProfilesService],
  exports: [ProfilesService],
})
export class ProfilesModule {}
