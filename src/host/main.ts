// With OTEL_EXPORTER_OTLP_ENDPOINT set, tracing patches http, mysql2, better-sqlite3 and ioredis as
// they load, so it comes first; without it, nothing of OpenTelemetry is loaded.
import './tracing/register';
import type { AddressInfo } from 'node:net';
import { createApp, metricsPortOf } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';
import { createServiceLogger } from './logging/service-logger';

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
  const log = createServiceLogger(config.logging, config.nodeEnv);
  const app = await createApp(config, { log }).catch((error: unknown) => {
    process.stderr.write(`The service could not start: ${(error as Error).message}\n`);
    process.exit(1);
  });
  await app.listen({ port: config.port, host: config.host });
  const { port } = app.getHttpServer().address() as AddressInfo;
  const metricsPort = metricsPortOf(app);
  const metrics =
    metricsPort !== undefined
      ? `, metrics on port ${metricsPort}`
      : config.metrics.token
        ? ', metrics on /metrics'
        : '';
  const replicas = config.databaseReplicaUrls.length;
  const replicaNote = replicas > 0 ? `, ${replicas} read replica${replicas > 1 ? 's' : ''}` : '';
  // The one line a start says at info: what listens where, on which database.
  log.info(
    {
      port,
      metricsPort,
      database: config.databaseUrl,
      replicas: config.databaseReplicaUrls,
      schemaProfile: config.schemaProfile,
    },
    `Serving POST http://localhost:${port}/query (database ${config.databaseUrl}${replicaNote}, schema profile ${config.schemaProfile}${metrics})`,
  );
}

void bootstrap();
