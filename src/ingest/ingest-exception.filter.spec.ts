import {
  ArgumentsHost,
  ForbiddenException,
  HttpException,
  HttpStatus,
  UnauthorizedException,
} from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { IngestExceptionFilter } from './ingest-exception.filter';

/** What the filter answers for `exception`, through an adapter that records the reply. */
function answerTo(exception: unknown): { status: number; body: any } {
  let answer: { status: number; body: any } | undefined;
  const adapterHost = {
    httpAdapter: {
      reply: (_response: unknown, body: unknown, status: number) => {
        answer = { status, body };
      },
    },
  } as unknown as HttpAdapterHost;
  const host = {
    switchToHttp: () => ({ getRequest: () => ({ headers: {} }), getResponse: () => ({}) }),
  } as unknown as ArgumentsHost;
  new IngestExceptionFilter(adapterHost).catch(exception, host);
  if (!answer) throw new Error('no answer');
  return answer;
}

describe('IngestExceptionFilter', () => {
  it("keeps the status of the host's own guards' refusals, in the envelope", () => {
    const throttled = answerTo(
      new HttpException('ThrottlerException: Too Many Requests', HttpStatus.TOO_MANY_REQUESTS),
    );
    expect(throttled.status).toBe(429);
    expect(throttled.body.errors[0].extensions).toMatchObject({
      code: ErrorCode.RATE_LIMIT_EXCEEDED,
      http_status: 429,
    });
    expect(answerTo(new UnauthorizedException()).status).toBe(401);
    expect(answerTo(new ForbiddenException()).body.errors[0].extensions).toMatchObject({
      code: ErrorCode.INSUFFICIENT_SCOPE,
      http_status: 403,
    });
  });

  it("answers the module's own refusals with their code, and other client errors with 400", () => {
    expect(
      answerTo(new LoyaltyException(ErrorCode.INVALID_TOKEN)).body.errors[0].extensions,
    ).toMatchObject({ code: ErrorCode.INVALID_TOKEN, http_status: 401 });
    const bad = answerTo(new HttpException('Bad Request', HttpStatus.BAD_REQUEST));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.code).toBe(ErrorCode.MALFORMED_REQUEST);
  });

  it('answers a failure of its own as a 500 without its details', () => {
    const failed = answerTo(new Error('secret internals'));
    expect(failed.status).toBe(500);
    expect(JSON.stringify(failed.body)).not.toContain('secret internals');
  });
});
