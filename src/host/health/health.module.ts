import { DynamicModule, Module } from '@nestjs/common';
import { DatabaseHealth, HEALTH_OPTIONS, HealthOptions } from './database-health.service';
import { HealthController } from './health.controller';
import { ShutdownState } from './shutdown-state.service';

/** Our host's liveness and readiness endpoints, database probe and shutdown state. */
@Module({})
export class HealthModule {
  /** `rateLimit` is the host's rate-limit module, whose store state readiness reports. */
  static forRoot(options: HealthOptions, rateLimit: DynamicModule): DynamicModule {
    return {
      module: HealthModule,
      imports: [rateLimit],
      controllers: [HealthController],
      providers: [{ provide: HEALTH_OPTIONS, useValue: options }, DatabaseHealth, ShutdownState],
      exports: [DatabaseHealth, ShutdownState],
    };
  }
}
