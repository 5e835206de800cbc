import { DynamicModule, Module } from '@nestjs/common';
import Redis from 'ioredis';
import { RateLimiter, SHARED_RATE_LIMIT_STORAGE } from './rate-limiter.service';
import { RedisThrottlerStorage } from './redis-throttler.storage';

const READY_WAIT_MS = 2_000;

/** Our host's rate limiter: in this process, or shared by every instance through Redis. */
@Module({})
export class RateLimitModule {
  static forRoot(redisUrl?: string): DynamicModule {
    return {
      module: RateLimitModule,
      providers: [
        RateLimiter,
        {
          provide: SHARED_RATE_LIMIT_STORAGE,
          useFactory: async () => {
            if (!redisUrl) return undefined;
            // Fail fast while Redis is away (the limiter falls back to local windows), and keep
            // trying to reconnect in the background.
            const redis = new Redis(redisUrl, {
              enableOfflineQueue: false,
              maxRetriesPerRequest: 0,
              connectTimeout: 1_000,
              commandTimeout: 250,
              retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
            });
            redis.on('error', () => undefined); // reported by the limiter, once per outage
            // Start with the shared budget when Redis is there; a Redis that is down at start
            // costs at most this wait, then the instance limits locally until it connects.
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, READY_WAIT_MS);
              redis.once('ready', () => {
                clearTimeout(timer);
                resolve();
              });
            });
            return new RedisThrottlerStorage(redis);
          },
        },
      ],
      exports: [RateLimiter],
    };
  }
}
