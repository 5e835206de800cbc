import type { LoggerService } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import { hostname } from 'node:os';
import { maskedPath } from '../http/masked-path';
import { gateTokenOf } from '../http/query-gate';
import { operationOf } from '../http/request-labels';

import { SERVICE_VERSION } from '../../common/package-version';
import type { LogLevelName } from './log-levels';

export { LOG_LEVELS, type LogLevelName } from './log-levels';

export interface LogConfig {
  level: LogLevelName;
  /** JSON lines, one readable line per event, or 'auto': readable on a terminal unless production. */
  format: 'json' | 'pretty' | 'auto';
}

/** The service's logger: pino, writing JSON lines (or readable lines) to stdout. */
export function createServiceLogger(
  config: LogConfig,
  nodeEnv: string,
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Logger {
  const pretty =
    config.format === 'pretty' ||
    (config.format === 'auto' && out.isTTY === true && nodeEnv !== 'production');
  const destination: DestinationStream = pretty
    ? prettyLines(out)
    : { write: (line) => void out.write(line) };
  // Required here, not imported: the loyalty CLI in a host without pino loads this module too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { pino, stdTimeFunctions } = require('pino') as typeof import('pino');
  return pino(
    {
      level: config.level,
      // pino's own base (pid, hostname), and the version: every line says what wrote it.
      base: { pid: process.pid, hostname: hostname(), version: SERVICE_VERSION },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

const PRETTY_SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'version']);

/** `12:00:01.123 INFO  message key=value ...`: for a developer's terminal, not for collectors. */
function prettyLines(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(line: string) {
      const event = JSON.parse(line) as Record<string, unknown>;
      const time = typeof event.time === 'string' ? event.time.slice(11, 23) : '';
      const level = String(event.level).toUpperCase().padEnd(5);
      const fields = Object.entries(event)
        .filter(([key]) => !PRETTY_SKIP.has(key))
        .map(
          ([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
        );
      out.write(
        `${time} ${level} ${typeof event.msg === 'string' ? event.msg : ''} ${fields.join(' ')}`.trimEnd() +
          '\n',
      );
    },
  };
}

/**
 * Nest's start-up chatter (modules loaded, every route mapped): debug, so that at info the
 * service says one line when it starts (main.ts), not forty.
 */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'GraphQLModule',
]);

/** Nest's logger, writing through pino: each event with its Nest context as `context`. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = contextOf(rest);
    if (context && FRAMEWORK_CONTEXTS.has(context)) this.write('debug', message, context);
    else this.write('info', message, context);
  }

  error(message: unknown, ...rest: unknown[]): void {
    const context = contextOf(rest);
    const stack = rest.length > 1 || !context ? rest[0] : undefined;
    if (typeof stack === 'string') this.pino.error({ context, stack }, String(message));
    else this.write('error', message, context);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, contextOf(rest));
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, contextOf(rest));
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, contextOf(rest));
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, contextOf(rest));
  }

  private write(
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    context?: string,
  ): void {
    if (!this.pino.isLevelEnabled(level)) return;
    if (message instanceof Error) this.pino[level]({ context, err: message }, message.message);
    else if (typeof message === 'object' && message !== null)
      this.pino[level]({ context, ...message });
    else this.pino[level]({ context }, String(message));
  }
}

/** Nest passes the context last. */
function contextOf(rest: unknown[]): string | undefined {
  const last = rest[rest.length - 1];
  return typeof last === 'string' ? last : undefined;
}

/** Routes whose every answer is logged at debug: probes and scrapes would drown the rest. */
const QUIET_ROUTES = new Set(['/health/live', '/health/ready', '/metrics']);

/**
 * One line per answered request: its id, route, status, duration, the client's address (as
 * TRUST_PROXY reads it) and the id of the token that made it (never the token). The path is logged without its query string, and with credentials in
 * it (an invitation's secret) masked.
 */
export function logRequest(log: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions.url;
  const level = route !== undefined && QUIET_ROUTES.has(route) ? 'debug' : 'info';
  if (!log.isLevelEnabled(level)) return;
  log[level](
    {
      reqId: request.id,
      method: request.method,
      path: maskedPath(route, request.url, request.params),
      route: route ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      client: request.ip,
      tokenId: gateTokenOf(request)?.id ?? null,
      operation: operationOf(request),
    },
    'request',
  );
}
