import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminSessionEntity } from './admin-session.entity';
import { AdminEntity } from './admin.entity';
import { AdminsService } from './admins.service';
import { DashboardAuth } from './dashboard-auth.service';
import { DashboardController } from './dashboard.controller';
import { SessionsService } from './sessions.service';
import { SettingsApiController } from './settings-api.controller';
import { SignInThrottle } from './sign-in-throttle.service';

/** Admins, their sessions, the dashboard pages and the settings endpoint: our host's, a separate trust boundary. */
@Module({})
export class DashboardModule {
  /** `loyalty` and `rateLimit` are the host's own module instances, shared, not duplicated. */
  static forRoot(loyalty: DynamicModule, rateLimit: DynamicModule): DynamicModule {
    return {
      module: DashboardModule,
      imports: [TypeOrmModule.forFeature([AdminEntity, AdminSessionEntity]), loyalty, rateLimit],
      controllers: [DashboardController, SettingsApiController],
      providers: [AdminsService, SessionsService, DashboardAuth, SignInThrottle],
      exports: [AdminsService],
    };
  }
}
