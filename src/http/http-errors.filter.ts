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
import { ErrorCode } from '../common/errors/error-code';
import { refuse } from './query-gate';

/** What Fastify refuses before a route runs (Nest hands it over as an HttpException). */
function describe(status: number, maxBodyBytes: number): { code: ErrorCode; message: string } {
  if (status === Number(HttpStatus.PAYLOAD_TOO_LARGE)) {
    return {
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: `Request body is too large: at most ${maxBodyBytes} bytes`,
    };
  }
  if (status === Number(HttpStatus.UNSUPPORTED_MEDIA_TYPE)) {
    return { code: ErrorCode.MALFORMED_REQUEST, message: 'Content-Type must be application/json' };
  }
  return { code: ErrorCode.MALFORMED_REQUEST, message: 'Request body is not valid JSON' };
}

/**
 * Our host's app-wide filter: requests to /query that fail before GraphQL (body too large, broken
 * JSON, wrong media type) are answered in the error envelope with HTTP 400. Other routes keep
 * Nest's own handling; GraphQL errors pass through untouched.
 */
@Catch()
export class HttpErrorsFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('HTTP');

  constructor(
    httpAdapter: HttpServer,
    private readonly queryPath: string,
    private readonly maxBodyBytes: number,
  ) {
    super(httpAdapter);
  }

  override catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType() !== 'http') return exception;
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // The routed path, as the gate sees it ("/%71uery" is /query too).
    const path = request.routeOptions?.url ?? request.url.split('?')[0];
    if (path !== this.queryPath) return super.catch(exception, host);
    const status =
      exception instanceof HttpException ? exception.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;
    if (status >= 400 && status < 500) {
      const { code, message } = describe(status, this.maxBodyBytes);
      return refuse(reply, request, code, message);
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    return refuse(reply, request, ErrorCode.INTERNAL_SERVER_ERROR);
  }
}
