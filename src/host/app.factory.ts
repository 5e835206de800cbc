import type { LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Logger } from 'pino';
import { AppModule, AppModuleExtras, QUERY_PATH } from './app.module';
import { AccessTokensService } from '../auth/access-tokens.service';
import { ErrorCode } from '../common/errors/error-code';
import type { AppConfig } from './config/app-config';
import { DatabaseHealth } from './health/database-health.service';
import { ShutdownState } from './health/shutdown-state.service';
import { answerBodyFailures, RouteLimits } from './http/body-failures';
import { installErrorEnvelopes, refuseUnrouted, sendError } from './http/http-errors';
import { HttpErrorsFilter } from './http/http-errors.filter';
import { DashboardAuth } from './dashboard/dashboard-auth.service';
import { AuditService } from './dashboard/audit/audit.service';
import { IngestSpaceAudit } from './dashboard/audit/ingest-space-audit';
import type { LoyaltyObserver } from '../options/loyalty-module-options.interface';
import { dashboardNotFound, installFavicon } from './dashboard/not-found';
import { RouteTable } from './http/route-table';
import { gateTokenOf, installQueryGate, refuse, SHUTTING_DOWN } from './http/query-gate';
import { installResponseCache } from './http/response-cache';
import { BoardChangeFeed } from '../leaderboards/changes/board-change-feed';
import { trackIngestRequests } from './http/ingest-in-flight';
import { IngestLoad } from './http/ingest-load';
import { INGEST_PATH } from '../ingest/ingest.controller';
import { EXPORT_PATH } from '../export/board-export.controller';
import { RateLimiter } from './rate-limit/rate-limiter.service';
import { TransactionRunner } from '../storage/transactions/transaction-runner';
import { RankIndexService } from '../leaderboards/rank-index/rank-index.service';
import { BoardTotalsStore } from '../leaderboards/ledger/board-totals.store';
import { ReadReplicas } from '../storage/replica/read-replicas';
import { createServiceLogger, logRequest, PinoNestLogger } from './logging/service-logger';
import { installMetricsRoute, portOf, startMetricsServer } from './metrics/metrics-endpoint';
import type { ServiceMetrics } from './metrics/service-metrics';

export interface CreateAppOptions extends AppModuleExtras {
  /** Nest's logger. When given (tests, benchmarks), requests are not logged unless `log` is. */
  logger?: LoggerService | LogLevel[] | false;
  /**
   * The service's pino logger: a line per request, and Nest's events when `logger` is not given.
   * Default: one on stdout, as config.logging says.
   */
  log?: Logger | false;
}

const metricsServers = new WeakMap<object, Server>();

/** prom-client is required only when metrics are on (the CLI's schema command has none). */
function newServiceMetrics(): ServiceMetrics {
  type Module = typeof import('./metrics/service-metrics');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ServiceMetrics } = require('./metrics/service-metrics') as Module;
  return new ServiceMetrics();
}

/** The port of the app's own GET /metrics listener (METRICS_PORT), if it has one. */
export function metricsPortOf(app: NestFastifyApplication): number | undefined {
  const server = metricsServers.get(app);
  return server ? portOf(server) : undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** How long a shutdown waits for requests in flight (what Apollo's drain plugin allowed). */
const SHUTDOWN_GRACE_MS = 10_000;

/** A caller's own request id is kept when it is sane, so logs on both sides line up. */
function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

/** The routes that answer in the error envelope, with their body limits and media types. */
function routeLimitsOf(config: AppConfig): RouteLimits {
  return {
    [QUERY_PATH]: { maxBodyBytes: config.limits.maxBodyBytes, mediaTypes: 'application/json' },
    [INGEST_PATH]: {
      maxBodyBytes: config.ingest.maxBodyBytes,
      mediaTypes: 'application/json (an array of records) or application/x-ndjson',
    },
  };
}

/** Builds the standalone service, initialised and ready to listen. */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    // Every route and every unknown path gets the /query limit; routeLimits may raise a route's.
    bodyLimit: config.limits.maxBodyBytes,
    genReqId: requestIdOf,
    trustProxy: config.trustProxy,
    // On close, idle keep-alive connections are dropped; requests in flight are finished.
    forceCloseConnections: 'idle',
    // A request on a kept connection during shutdown is refused by our hook below, in the error
    // envelope, instead of with Fastify's own 503 body.
    return503OnClosing: false,
    // A URL Fastify cannot decode never reaches a route or Nest: answered here, in the envelope.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      void reply.header('x-request-id', request.id);
      if (error.code === 'FST_ERR_BAD_URL') {
        sendError(reply, request, ErrorCode.MALFORMED_REQUEST, 'Request URL is not valid');
      } else {
        sendError(reply, request, ErrorCode.INTERNAL_SERVER_ERROR);
      }
    },
  });
  const routeLimits = routeLimitsOf(config);
  const corsEnabled = config.corsOrigins.length > 0;
  // Without CORS there is no preflight to answer: OPTIONS is a method no route has.
  const routes = new RouteTable(corsEnabled ? [] : ['OPTIONS']);
  const server = adapter.getInstance();
  server.addHook('onRoute', (route) => {
    const limit = routeLimits[route.url]?.maxBodyBytes;
    if (limit !== undefined) route.bodyLimit = limit;
  });
  server.addHook('onRoute', routes.onRoute);
  answerBodyFailures(server, routeLimits);
  const log =
    options.log ??
    (options.logger === undefined ? createServiceLogger(config.logging, config.nodeEnv) : false);
  // Metrics cost a hook per request: only when something can read them.
  const metricsOn = config.metrics.port !== undefined || config.metrics.token !== undefined;
  const metrics = metricsOn ? newServiceMetrics() : undefined;
  // Space records applied through POST /ingest go to the audit trail, as dashboard changes do.
  const spaceAudit = new IngestSpaceAudit();
  const observer: LoyaltyObserver = {
    ...(metrics
      ? {
          recordsIngested: (counts) => metrics.recordsIngested(counts),
          rankIndexLoaded: (board, entries, ms) => metrics.rankIndexLoaded(board, entries, ms),
        }
      : {}),
    spacesWritten: (spaces, by) => spaceAudit.spacesWritten(spaces, by),
  };
  // Request lines are at info (probes at debug): above that, no hook is needed for them.
  const logsRequests = log !== false && log.isLevelEnabled('info');
  // NDJSON bodies: the module's own parser streams them to POST /ingest within the route's limit.
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, {
      ...options,
      observer,
      labelOperations: metrics !== undefined || logsRequests,
    }),
    adapter,
    {
      logger: options.logger ?? (log ? new PinoNestLogger(log) : ['log', 'warn', 'error']),
      // Throw instead of exiting: main.ts reports it, a test sees it.
      abortOnError: false,
    },
  );
  if (corsEnabled) {
    app.enableCors({
      origin: config.corsOrigins,
      methods: ['POST'],
      allowedHeaders: ['content-type', 'access-token'],
    });
  }
  spaceAudit.bind(app.get(AuditService));
  const fastify = app.getHttpAdapter().getInstance();
  const shutdown = app.get(ShutdownState);
  // Callback style: an async hook costs a promise and a microtask on every request.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!shutdown.isDraining) return done();
    // Shutting down: every new request, on any route and on a kept-alive connection too.
    reply.header('connection', 'close');
    refuse(reply, request, ErrorCode.SERVICE_UNAVAILABLE, SHUTTING_DOWN);
  });
  // Requests in flight finish, but no longer than this: then their connections are cut.
  fastify.addHook('preClose', (done) => {
    setTimeout(() => fastify.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    done();
  });
  if (!corsEnabled) {
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.method !== 'OPTIONS') return done();
      refuseUnrouted(reply, request, routes);
    });
  }
  const gateServices = {
    tokens: app.get(AccessTokensService),
    limiter: app.get(RateLimiter),
    database: app.get(DatabaseHealth),
    shutdown,
  };
  installQueryGate(fastify, gateServices, {
    path: QUERY_PATH,
    scope: 'query',
    rateLimits: config.rateLimits,
    requestTimeoutMs: config.requestTimeoutMs,
    graphqlIde: config.graphqlIde,
  });
  installQueryGate(fastify, gateServices, {
    path: INGEST_PATH,
    scope: 'ingest',
    rateLimits: { token: config.ingest.rateLimits, address: config.rateLimits.address },
    graphqlIde: false,
  });
  installQueryGate(fastify, gateServices, {
    path: EXPORT_PATH,
    scope: 'query',
    budget: 'export',
    rateLimits: { token: config.boardExport.rateLimits, address: config.rateLimits.address },
    graphqlIde: false,
  });
  const ingestLoad = app.get(IngestLoad);
  app.get(TransactionRunner).useLoadHint(ingestLoad);
  trackIngestRequests(fastify, INGEST_PATH, ingestLoad);
  if (config.responseCacheMs > 0) {
    const feed = app.get(BoardChangeFeed);
    installResponseCache(fastify, {
      path: QUERY_PATH,
      maxAgeMs: config.responseCacheMs,
      maxEntries: 1000,
      maxEntryBytes: 1_048_576,
      maxTotalBytes: 64 * 1_048_576,
      version: () => feed.version,
      varyBy: (request) => gateTokenOf(request)?.id ?? '',
    });
  }
  if (metrics) {
    const totals = app.get(BoardTotalsStore);
    const replicas = app.get(ReadReplicas);
    metrics.watch({
      rankIndex: app.get(RankIndexService),
      feed: app.get(BoardChangeFeed),
      dataSource: app.get(getDataSourceToken()),
      backlogEntries:
        totals.unfoldedEntries() === undefined ? undefined : () => totals.unfoldedEntries() ?? 0,
      replicaLags: replicas.enabled ? () => replicas.lags() : undefined,
    });
    if (config.metrics.token !== undefined) {
      installMetricsRoute(fastify, metrics, config.metrics.token);
    }
  }
  if (metrics || logsRequests) {
    fastify.addHook('onResponse', (request, reply, done) => {
      metrics?.observe(request, reply);
      if (logsRequests) logRequest(log, request, reply);
      done();
    });
  }
  let metricsServer: Server | undefined;
  fastify.addHook('onClose', (_instance, done) => {
    if (metricsServer) metricsServer.close(() => done());
    else done();
  });
  installErrorEnvelopes(fastify, QUERY_PATH);
  installFavicon(fastify);
  // Unknown /dashboard addresses get the dashboard's 404 page; every other path, the envelope.
  app.useGlobalFilters(new HttpErrorsFilter(routes, [dashboardNotFound(app.get(DashboardAuth))]));
  app.enableShutdownHooks();
  await app.init();
  await fastify.ready();
  if (metrics && config.metrics.port !== undefined) {
    try {
      metricsServer = await startMetricsServer(metrics, config.metrics.port, config.metrics.host);
    } catch (error) {
      await app.close();
      throw new Error(`METRICS_PORT ${config.metrics.port}: ${(error as Error).message}`);
    }
    metricsServers.set(app, metricsServer);
  }
  return app;
}
