import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../../config/app-config';
import { AdminsService } from '../../dashboard/accounts/admins.service';
import { AuditService } from '../../dashboard/audit/audit.service';
import { DASHBOARD_ENTITIES } from '../../dashboard/dashboard.entities';
import { LoyaltyModule } from '../../../loyalty.module';
import { hostDataSourceOptions } from '../../config/host-data-source';

/** The command line's host: the database and the module's services, no HTTP and no GraphQL. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: async () => ({
            ...(await hostDataSourceOptions(config.database, { migrationsRun: false })),
            retryAttempts: 0,
          }),
        }),
        LoyaltyModule.forRoot({ cursorSecret: config.cursorSecret }),
        TypeOrmModule.forFeature(DASHBOARD_ENTITIES),
      ],
      providers: [AdminsService, AuditService],
    };
  }
}
