import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RateLimiter } from '../rate-limit/rate-limiter.service';
import { SERVICE_VERSION } from '../../common/package-version';
import { DatabaseHealth } from './database-health.service';
import { ShutdownState } from './shutdown-state.service';

/** For orchestrators: no token needed, and nothing here touches the boards. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly shutdown: ShutdownState,
    private readonly rateLimiter: RateLimiter,
  ) {}

  /** The process is alive and serving HTTP; which version it runs. */
  @Get('live')
  live(): { status: 'ok'; version: string } {
    return { status: 'ok', version: SERVICE_VERSION };
  }

  /** Ready for traffic: the database answers and no shutdown is under way. */
  @Get('ready')
  ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const database = this.database.isUp() ? 'up' : 'down';
    const ready = database === 'up' && !this.shutdown.isDraining;
    void reply.status(ready ? 200 : 503);
    return {
      status: ready ? 'ready' : 'unavailable',
      version: SERVICE_VERSION,
      checks: {
        database,
        shuttingDown: this.shutdown.isDraining,
        // Redis down does not make the service unready: limits fall back to each instance.
        rateLimitStore: this.rateLimiter.storeState,
      },
    };
  }
}
