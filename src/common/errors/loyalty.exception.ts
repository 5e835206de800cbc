import { IntrinsicException } from '@nestjs/common';
import { ERROR_DEFINITIONS, ErrorCategory, ErrorCode } from './error-code';

/**
 * A domain error: thrown by services; its message is always safe to show to a client.
 *
 * It carries its envelope fields as `extensions`, which graphql-js copies onto the GraphQL error
 * wherever it is thrown: field resolvers run outside Nest's filters (no per-field enhancers, for
 * speed), and a host with its own `formatError` still sees our codes. Like Nest's HttpException it
 * is intrinsic: Nest's default handlers do not log it as an error with its stack (a refusal is an
 * answer, not a fault).
 */
export class LoyaltyException extends IntrinsicException {
  readonly extensions: { code: ErrorCode; category: ErrorCategory; http_status: number };

  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_DEFINITIONS[code].message,
    /** For a refusal to retry later (429, 503) outside GraphQL: the Retry-After to send. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'LoyaltyException';
    const definition = ERROR_DEFINITIONS[code];
    this.extensions = { code, category: definition.category, http_status: definition.httpStatus };
  }
}
