import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ACCESS_TOKEN_HEADER,
  AccessTokensService,
  AuthenticatedToken,
} from '../../auth/access-tokens.service';
import { hasScope, insufficientScope, TokenScope } from '../../auth/token-scopes';
import { attachDeadline } from '../../common/deadline/deadline';
import { addRouteHooks } from './route-hooks';
import { ERROR_DEFINITIONS, ErrorCode } from '../../common/errors/error-code';
import { envelopeFor } from '../../common/errors/error-envelope';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { DatabaseHealth } from '../health/database-health.service';
import type { ShutdownState } from '../health/shutdown-state.service';
import type { RateLimitRule } from '../rate-limit/rate-limit-rules';
import type { RateLimitDecision, RateLimiter } from '../rate-limit/rate-limiter.service';

export interface QueryGateOptions {
  path: string;
  /** The scope a token needs here. */
  scope: TokenScope;
  /**
   * The budget's name (default: the scope). Token budgets are per token and per budget: ingestion
   * never spends the query budget, nor an export the pages'.
   */
  budget?: string;
  rateLimits: { token: RateLimitRule[]; address: RateLimitRule[] };
  /** Omitted: no deadline (a write runs to its commit or rollback; its answer says which). */
  requestTimeoutMs?: number;
  /** Let browsers GET the in-browser IDE without a token. */
  graphqlIde: boolean;
}

export interface QueryGateServices {
  tokens: AccessTokensService;
  limiter: RateLimiter;
  database: DatabaseHealth;
  shutdown: ShutdownState;
}

const DEADLINE = Symbol('loyalty.deadline');
const TOKEN = Symbol('loyalty.token');
const logger = new Logger('QueryGate');

/** The token the gate accepted for this request (undefined before the gate, or if it refused). */
export function gateTokenOf(request: object): AuthenticatedToken | undefined {
  return (request as Record<symbol, AuthenticatedToken | undefined>)[TOKEN];
}

/** The message of the 503 every request gets once a shutdown has begun. */
export const SHUTTING_DOWN = 'The service is shutting down: retry shortly';

/** Answers a request with one error in the envelope, before GraphQL sees it. */
export function refuse(
  reply: FastifyReply,
  request: FastifyRequest,
  code: ErrorCode,
  message?: string,
): FastifyReply {
  return reply
    .code(ERROR_DEFINITIONS[code].httpStatus)
    .type('application/json')
    .send({ errors: [envelopeFor(code, message, request.id)] });
}

function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply.header('RateLimit-Limit', decision.limit);
  void reply.header('RateLimit-Remaining', decision.remaining);
  void reply.header('RateLimit-Reset', decision.resetSeconds);
  void reply.header('RateLimit-Policy', decision.policy);
}

function tooMany(
  reply: FastifyReply,
  request: FastifyRequest,
  decision: RateLimitDecision,
): FastifyReply {
  setRateLimitHeaders(reply, decision);
  void reply.header('Retry-After', decision.retryAfterSeconds);
  return refuse(reply, request, ErrorCode.RATE_LIMIT_EXCEEDED);
}

/** Apollo's landing page answers a GET that carries no operation; any other GET is a query. */
function isIdePageRequest(request: FastifyRequest): boolean {
  if (request.method !== 'GET') return false;
  const query = request.query as Record<string, unknown> | undefined;
  return (
    !query ||
    (query.query === undefined &&
      query.extensions === undefined &&
      query.operationName === undefined)
  );
}

/**
 * What a request to `options.path` (/query, /ingest, /export) must pass before it is read, once per HTTP
 * request: 503 while shutting down or the database is down; an address over its budget refused
 * before any token lookup (unless the token was seen valid here lately), so tokens cannot be
 * guessed at speed; the token (a bad one spends the address's budget); its own budget, then its
 * scope; then the deadline. Order and reasons: docs/adr/0003-rate-limit-gate.md.
 */
export function installQueryGate(
  fastify: FastifyInstance,
  services: QueryGateServices,
  options: QueryGateOptions,
): void {
  // Route hooks: no path comparison per request, and the other gate's hook never runs here.
  addRouteHooks(
    fastify,
    'installQueryGate',
    { path: options.path },
    { onRequest: gate, onResponse: clearDeadline },
  );

  async function gate(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (request.method === 'OPTIONS') return;
    if (options.graphqlIde && isIdePageRequest(request)) return;
    if (services.shutdown.isDraining) {
      void reply.header('Connection', 'close');
      return refuse(reply, request, ErrorCode.SERVICE_UNAVAILABLE, SHUTTING_DOWN);
    }
    if (!services.database.isUp()) {
      void reply.header('Retry-After', 1);
      return refuse(
        reply,
        request,
        ErrorCode.SERVICE_UNAVAILABLE,
        'The database is unavailable: retry shortly',
      );
    }
    const header = request.headers[ACCESS_TOKEN_HEADER];
    const presented = Array.isArray(header) ? header[0] : header;
    const addressKey = `address:${request.ip}`;
    const blockedFor = services.limiter.blockedFor(addressKey);
    if (blockedFor > 0 && !services.tokens.wasValidRecently(presented)) {
      void reply.header('Retry-After', blockedFor);
      return refuse(reply, request, ErrorCode.RATE_LIMIT_EXCEEDED);
    }
    let token: AuthenticatedToken;
    try {
      token = await services.tokens.authenticateRequest(request);
    } catch (error) {
      if (!(error instanceof LoyaltyException)) {
        logger.error(`Token lookup failed: ${(error as Error).message}`);
        return refuse(
          reply,
          request,
          ErrorCode.SERVICE_UNAVAILABLE,
          'The database is unavailable: retry shortly',
        );
      }
      const decision = await services.limiter.consume(addressKey, options.rateLimits.address);
      if (decision && !decision.allowed) return tooMany(reply, request, decision);
      return refuse(reply, request, error.code, error.message);
    }
    const decision = await services.limiter.consume(
      `token:${token.id}:${options.budget ?? options.scope}`,
      options.rateLimits.token,
    );
    if (decision) {
      if (!decision.allowed) return tooMany(reply, request, decision);
      setRateLimitHeaders(reply, decision);
    }
    if (!hasScope(token, options.scope)) {
      const refusal = insufficientScope(options.scope);
      return refuse(reply, request, refusal.code, refusal.message);
    }
    (request as unknown as Record<symbol, AuthenticatedToken>)[TOKEN] = token;
    if (options.requestTimeoutMs === undefined) return;
    const timeoutMs = options.requestTimeoutMs;
    const controller = attachDeadline(request);
    (request as unknown as Record<symbol, NodeJS.Timeout>)[DEADLINE] = setTimeout(() => {
      controller.abort();
      if (!reply.sent) {
        refuse(
          reply,
          request,
          ErrorCode.REQUEST_TIMEOUT,
          `Request timed out after ${timeoutMs} ms`,
        );
      }
    }, timeoutMs);
  }

  function clearDeadline(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
    clearTimeout((request as unknown as Record<symbol, NodeJS.Timeout | undefined>)[DEADLINE]);
    done();
  }
}
