import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const app = await createApp(config).catch((error: unknown) => {
    process.stderr.write(`The service could not start: ${(error as Error).message}\n`);
    process.exit(1);
  });
  await app.listen({ port: config.port, host: config.host });
  const { port } = app.getHttpServer().address() as AddressInfo;
  new Logger('Bootstrap').log(
    `Serving POST http://localhost:${port}/query (database ${config.databaseUrl}${config.strictMode ? ', strict mode' : ''})`,
  );
}

void bootstrap();
