import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsApiController } from './accounts-api.controller';
import { AdminsService } from './accounts/admins.service';
import { AccountActions } from './account-actions.service';
import { TeamActions } from './team-actions.service';
import { TokenActions } from './token-actions.service';
import { DashboardAuth } from './dashboard-auth.service';
import { DASHBOARD_ENTITIES } from './dashboard.entities';
import { DashboardController } from './dashboard.controller';
import { DashboardViews } from './dashboard-views.service';
import { SessionsService } from './accounts/sessions.service';
import { SettingsApiController } from './settings-api.controller';
import { SignInThrottle } from './sign-in-throttle.service';
import { AuditService } from './audit/audit.service';
import { TeamsApiController } from './teams-api.controller';
import { TeamsPagesController } from './teams-pages.controller';
import { PointsPagesController } from './points-pages.controller';
import { BoardPagesController } from './board-pages.controller';
import { ContentPagesController } from './content-pages.controller';
import { ContentActions } from './content-actions.service';
import { PointsUploads } from './points-uploads.service';
import { MembersService } from './accounts/members.service';

/**
 * Accounts, sessions, teams, the audit trail, the dashboard pages and the settings endpoints: our
 * host's, a separate trust boundary.
 */
@Module({})
export class DashboardModule {
  /** `loyalty` and `rateLimit` are the host's own module instances, shared, not duplicated. */
  static forRoot(loyalty: DynamicModule, rateLimit: DynamicModule): DynamicModule {
    return {
      module: DashboardModule,
      imports: [TypeOrmModule.forFeature(DASHBOARD_ENTITIES), loyalty, rateLimit],
      controllers: [
        DashboardController,
        TeamsPagesController,
        PointsPagesController,
        BoardPagesController,
        ContentPagesController,
        SettingsApiController,
        TeamsApiController,
        AccountsApiController,
      ],
      providers: [
        AccountActions,
        TokenActions,
        TeamActions,
        ContentActions,
        PointsUploads,
        AdminsService,
        SessionsService,
        MembersService,
        AuditService,
        DashboardAuth,
        DashboardViews,
        SignInThrottle,
      ],
      exports: [AdminsService, AuditService],
    };
  }
}
