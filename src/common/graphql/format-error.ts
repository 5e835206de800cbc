import { Logger } from '@nestjs/common';
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors/error-code';
import { toErrorEnvelope } from '../errors/error-envelope';

const logger = new Logger('GraphQL');

/**
 * Apollo `formatError` hook: every error leaves in the envelope of PRODUCT.md, and an internal
 * error is logged here in full while the client only sees "Internal server error".
 */
export function formatLoyaltyError(
  formatted: GraphQLFormattedError,
  error: unknown,
): GraphQLFormattedError {
  const envelope = toErrorEnvelope(formatted);
  if (envelope.extensions?.code === ErrorCode.INTERNAL_SERVER_ERROR) {
    const cause = (error as { originalError?: unknown })?.originalError ?? error;
    logger.error(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause));
  }
  return envelope;
}
