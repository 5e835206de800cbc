import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { IncomingMessage } from 'node:http';
import { BetterSqlite3Instrumentation } from './better-sqlite3.instrumentation';
import { RequestsOnlySampler, samplerOf } from './requests-only.sampler';
import { nameRouteSpans } from './route-spans';
import { redactQueryValues, statementText } from './span-text';
import { StatementErrorsProcessor } from './statement-errors.processor';
import { DEFAULT_SERVICE_NAME, readTracingOptions } from './tracing-options';

/** Spans still buffered at shutdown get this long to reach the collector. */
const SHUTDOWN_FLUSH_MS = 5000;

export interface Tracing {
  /** Exports the spans still buffered and stops; later calls wait for the first. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing: the provider, its exporter and the instrumentations, which patch http, mysql2,
 * pg, better-sqlite3 and ioredis as they are loaded after this. Loaded only when tracing is on.
 */
export function startTracing(env: NodeJS.ProcessEnv): Tracing {
  const options = readTracingOptions(env);
  const exporter =
    options.protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter();
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over our name.
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
      .merge(detectResources({ detectors: [envDetector, serviceInstanceIdDetector] })),
    sampler: new RequestsOnlySampler(samplerOf(options.sampler)),
    spanProcessors: [new StatementErrorsProcessor(), new BatchSpanProcessor(exporter)],
  });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not requests anyone traces; ignored ones trace nothing below.
        ignoreIncomingRequestHook: (request) => isProbe(request.url ?? ''),
        // The service calls out to nothing but the collector, whose requests are never traced.
        disableOutgoingRequestInstrumentation: true,
        startIncomingSpanHook: queryStringShape,
      }),
      new MySQL2Instrumentation({
        // The statement as written: by default the instrumentation formats the values into it.
        maskStatement: true,
        maskStatementHook: statementText,
      }),
      new PgInstrumentation({
        // No values (enhancedDatabaseReporting stays off), and no span per pooled connection.
        ignoreConnectSpans: true,
        // The statement as sent, cut as mysql2's are.
        requestHook: (span, { query }) =>
          span.setAttribute('db.query.text', statementText(query.text)),
      }),
      new BetterSqlite3Instrumentation(),
      new IORedisInstrumentation({
        // The command's name only: its keys name tokens and client addresses.
        dbStatementSerializer: (command) => command,
      }),
    ],
  });
  nameRouteSpans();
  let stopped: Promise<void> | undefined;
  return {
    shutdown: () => (stopped ??= withinFlushTime(provider.shutdown())),
  };
}

function isProbe(url: string): boolean {
  return url.startsWith('/health/') || url === '/metrics' || url.startsWith('/metrics?');
}

/** `url.query` with its values redacted (the instrumentation keeps them but for a few names). */
function queryStringShape(request: IncomingMessage): Record<string, string> {
  const url = request.url ?? '';
  const start = url.indexOf('?');
  return start < 0 || start === url.length - 1
    ? {}
    : { 'url.query': redactQueryValues(url.slice(start + 1)) };
}

function withinFlushTime(flush: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    flush.then(done, (error: unknown) => {
      process.stderr.write(`Tracing: spans not flushed at shutdown: ${(error as Error).message}\n`);
      done();
    });
  });
}
