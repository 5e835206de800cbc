import type { LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { AppModule, AppModuleExtras, QUERY_PATH } from './app.module';
import { AccessTokensService } from './auth/access-tokens.service';
import { installQueryAuthHook } from './auth/query-auth.hook';
import type { AppConfig } from './config/app-config';

export interface CreateAppOptions extends AppModuleExtras {
  logger?: LoggerService | LogLevel[] | false;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A caller's own request id is kept when it is sane, so logs on both sides line up. */
function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/** Builds the standalone service, initialised and ready to listen. */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ bodyLimit: 1_048_576, genReqId: requestIdOf });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, options),
    adapter,
    {
      logger: options.logger ?? ['log', 'warn', 'error'],
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installQueryAuthHook(fastify, app.get(AccessTokensService), QUERY_PATH);
  app.enableShutdownHooks();
  await app.init();
  await fastify.ready();
  return app;
}
