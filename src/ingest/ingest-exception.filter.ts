import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ErrorCode } from '../common/errors/error-code';
import { errorResponseBody, routeStatusOf } from '../common/errors/error-envelope';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { IncomingRequestLike, requestIdOf } from '../common/graphql/request-of';
import { classifyFailure } from '../storage/failure-classifier';
import { describeBodyFailure } from './ingest-body';

/** The envelope's code for a refusal of the host's, by its HTTP status. */
const HOST_REFUSALS: Partial<Record<number, ErrorCode>> = {
  401: ErrorCode.TOKEN_REQUIRED,
  403: ErrorCode.INSUFFICIENT_SCOPE,
  429: ErrorCode.RATE_LIMIT_EXCEEDED,
};

/**
 * Answers every failure of POST /ingest (and of GET /export), its guard's included, in the error envelope of
 * docs/api.md, through the host's HTTP adapter (Express or Fastify): a client's mistake is 400,
 * 401 or 403, a database outage 503, anything else a logged 500. Scoped to the controller with
 * `@UseFilters`, so a host needs no filter of ours and keeps its own for its routes.
 */
@Catch()
export class IngestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Ingest');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const { code, message } = this.describe(exception);
    if (code === ErrorCode.SERVICE_UNAVAILABLE) {
      const retryAfter =
        exception instanceof LoyaltyException ? (exception.retryAfterSeconds ?? 1) : 1;
      this.adapterHost.httpAdapter.setHeader(http.getResponse(), 'Retry-After', String(retryAfter));
    }
    const body = errorResponseBody(
      code,
      message,
      requestIdOf(http.getRequest<IncomingRequestLike>()),
    );
    this.adapterHost.httpAdapter.reply(http.getResponse(), body, routeStatusOf(code));
  }

  private describe(exception: unknown): { code: ErrorCode; message?: string } {
    if (exception instanceof LoyaltyException) {
      return { code: exception.code, message: exception.message };
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      const status = exception.getStatus();
      if (status === 413 || status === 415) return describeBodyFailure(status, undefined);
      // The host's own guards run on this route too (a throttler, an auth guard): their refusal
      // keeps its status, in the envelope, so that a client backs off on 429 as it would anywhere.
      const code = HOST_REFUSALS[status] ?? ErrorCode.MALFORMED_REQUEST;
      return { code, message: exception.message };
    }
    const failure = classifyFailure(exception);
    const detail = exception instanceof Error ? exception.message : String(exception);
    if (failure !== ErrorCode.INTERNAL_SERVER_ERROR) this.logger.warn(`${failure}: ${detail}`);
    else this.logger.error(exception instanceof Error ? (exception.stack ?? detail) : detail);
    return { code: failure };
  }
}
