import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { classifyFailure } from '../../storage/failure-classifier';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { describeBodyFailure } from './body-failures';
import { routeStatusOf } from '../../common/errors/error-envelope';
import { refuseUnrouted, sendError } from './http-errors';
import type { RouteTable } from './route-table';

/** The code of a client error Nest or a library threw as an HttpException, by its status. */
const CODE_OF_STATUS: Readonly<Record<number, ErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: ErrorCode.INVALID_ARGUMENT,
  [HttpStatus.UNAUTHORIZED]: ErrorCode.SIGN_IN_REQUIRED,
  [HttpStatus.FORBIDDEN]: ErrorCode.PERMISSION_DENIED,
  [HttpStatus.NOT_FOUND]: ErrorCode.NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: ErrorCode.METHOD_NOT_ALLOWED,
  [HttpStatus.CONFLICT]: ErrorCode.ALREADY_EXISTS,
  [HttpStatus.PAYLOAD_TOO_LARGE]: ErrorCode.REQUEST_TOO_LARGE,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: ErrorCode.MALFORMED_REQUEST,
  [HttpStatus.TOO_MANY_REQUESTS]: ErrorCode.RATE_LIMIT_EXCEEDED,
};

/**
 * Requests no route took under `prefix` (its own path included), answered there in its own way:
 * the dashboard answers browsers with an HTML page rather than the API's envelope.
 */
export interface UnroutedAnswer {
  prefix: string;
  /** `allowed`: the methods the path has routes for (none: a 404). */
  answer(request: FastifyRequest, reply: FastifyReply, allowed: string[]): Promise<unknown>;
  /**
   * A routed request under `prefix` that met a database outage or its deadline (`code`), answered
   * in the prefix's own way; undefined when it takes the envelope (a script's request).
   */
  failure?(request: FastifyRequest, reply: FastifyReply, code: ErrorCode): unknown;
}

/**
 * Our host's app-wide filter: every error that reaches it over HTTP is answered in the error
 * envelope. A request no route took is 404 NOT_FOUND, or 405 METHOD_NOT_ALLOWED when its path has
 * other methods (under a prefix with an UnroutedAnswer, that answer); a domain error keeps its
 * code; a client error thrown as an HttpException keeps its status and message; a database outage
 * or deadline is 503; anything else is a logged 500 that shows nothing. Refused bodies are
 * answered before this (answerBodyFailures), controllers' own filters (the dashboard pages, /ingest) first, and GraphQL errors pass through untouched.
 */
@Catch()
export class HttpErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  constructor(
    private readonly routes: RouteTable,
    private readonly unrouted: readonly UnroutedAnswer[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    if (host.getType() !== 'http') return exception;
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (reply.sent) {
      this.logger.error(`After the answer was sent: ${describe(exception)}`);
      return;
    }
    if (request.routeOptions?.url === undefined) {
      // No route matched. A body refused on the way to Nest's not-found handler is answered as
      // on any route, so every path keeps the body limit; otherwise it is the handler's 404.
      const status = exception instanceof HttpException ? exception.getStatus() : 404;
      if (status === 404 || status < 400 || status >= 500) {
        const path = request.url.split('?')[0];
        const own = this.unrouted.find(
          ({ prefix }) => path === prefix || path.startsWith(`${prefix}/`),
        );
        if (own) return own.answer(request, reply, this.routes.methodsAt(path));
        return refuseUnrouted(reply, request, this.routes);
      }
      const { code, message } = describeBodyFailure(status, request);
      return sendError(reply, request, code, message);
    }
    if (exception instanceof LoyaltyException) {
      return sendError(reply, request, exception.code, exception.message);
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      const code = CODE_OF_STATUS[status];
      return code
        ? sendError(reply, request, code, exception.message, routeStatusOf(code))
        : sendError(reply, request, ErrorCode.INVALID_ARGUMENT, exception.message, status);
    }
    if (exception instanceof HttpException && exception.getStatus() === 503) {
      return sendError(reply, request, ErrorCode.SERVICE_UNAVAILABLE);
    }
    const failure = classifyFailure(exception);
    if (failure !== ErrorCode.INTERNAL_SERVER_ERROR) {
      const path = request.url.split('?')[0];
      const own = this.unrouted.find(
        ({ prefix }) => path === prefix || path.startsWith(`${prefix}/`),
      );
      const answered = own?.failure?.(request, reply, failure);
      if (answered !== undefined) return answered;
      return sendError(reply, request, failure);
    }
    this.logger.error(describe(exception));
    return sendError(reply, request, ErrorCode.INTERNAL_SERVER_ERROR);
  }
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}
