import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { StorageModule } from '../storage/module/storage.module';
import { AccessTokenEntity } from './access-token.entity';
import { AccessTokenGuard } from './access-token.guard';
import { AccessTokensService } from './access-tokens.service';

@Module({
  imports: [TypeOrmModule.forFeature([AccessTokenEntity]), StorageModule],
  providers: [AccessTokensService, AccessTokenGuard],
  exports: [AccessTokensService, AccessTokenGuard],
})
export class AuthModule {}
