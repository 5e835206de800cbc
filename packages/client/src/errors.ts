/** Codes the client adds to the server's (docs/api.md, Errors). */
export type ClientErrorCode =
  | 'NETWORK_ERROR'
  | 'ABORTED'
  | 'REPEATED_CURSOR'
  | 'MISSING_CURSOR'
  | 'BAD_RESPONSE'
  | 'INVALID_ENDPOINT'
  /** exportBoard(): the server has no consistent export (walk the board instead). */
  | 'EXPORT_NOT_OFFERED'
  /** exportBoard(): the rows ended before the announced count; the snapshot is gone. */
  | 'INCOMPLETE_EXPORT';

export interface LoyaltyApiErrorDetails {
  httpStatus?: number;
  category?: string;
  requestId?: string;
  /** From Retry-After, when the server sent one. */
  retryAfterMs?: number;
}

/**
 * Every failure reaches the caller as this error: `code` is the envelope's code (SPACE_NOT_FOUND,
 * INVALID_CURSOR, RATE_LIMIT_EXCEEDED, ...) or one of the client's own.
 */
export class LoyaltyApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: LoyaltyApiErrorDetails = {},
  ) {
    super(message);
    this.name = 'LoyaltyApiError';
  }
}
