import {
  ArgumentsHost,
  Catch,
  HttpException,
  HttpServer,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { classifyFailure } from '../../storage/failure-classifier';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { refuse } from './query-gate';

/** Per routed path: what it accepts. */
export type RouteLimits = Record<string, { maxBodyBytes: number; mediaTypes: string }>;

/** What Fastify refuses before a route runs (Nest hands it over as an HttpException). */
function describe(
  status: number,
  limits: RouteLimits[string],
): { code: ErrorCode; message: string } {
  if (status === Number(HttpStatus.PAYLOAD_TOO_LARGE)) {
    return {
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: `Request body is too large: at most ${limits.maxBodyBytes} bytes`,
    };
  }
  if (status === Number(HttpStatus.UNSUPPORTED_MEDIA_TYPE)) {
    return {
      code: ErrorCode.MALFORMED_REQUEST,
      message: `Content-Type must be ${limits.mediaTypes}`,
    };
  }
  return { code: ErrorCode.MALFORMED_REQUEST, message: 'Request body is not valid JSON' };
}

/**
 * Our host's app-wide filter: requests to /query that fail before GraphQL (body too large, broken
 * JSON, wrong media type) and failures of /ingest are answered in the error envelope (400 for
 * bad requests, 503 when the database is down or timed out). Other routes keep Nest's own
 * handling; GraphQL errors pass through untouched.
 */
@Catch()
export class HttpErrorsFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('HTTP');

  constructor(
    httpAdapter: HttpServer,
    private readonly routes: RouteLimits,
  ) {
    super(httpAdapter);
  }

  override catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType() !== 'http') return exception;
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // The routed path, as the gate sees it ("/%71uery" is /query too).
    const path = request.routeOptions?.url ?? request.url.split('?')[0];
    const limits = Object.prototype.hasOwnProperty.call(this.routes, path)
      ? this.routes[path]
      : undefined;
    if (!limits) return super.catch(exception, host);
    if (exception instanceof LoyaltyException) {
      return refuse(reply, request, exception.code, exception.message);
    }
    const status =
      exception instanceof HttpException ? exception.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;
    if (status >= 400 && status < 500) {
      const { code, message } = describe(status, limits);
      return refuse(reply, request, code, message);
    }
    const failure = classifyFailure(exception);
    if (failure !== ErrorCode.INTERNAL_SERVER_ERROR) return refuse(reply, request, failure);
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    return refuse(reply, request, ErrorCode.INTERNAL_SERVER_ERROR);
  }
}
