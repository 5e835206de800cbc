import { Logger } from '@nestjs/common';
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors/error-code';
import { envelopeFor, toErrorEnvelope } from '../errors/error-envelope';
import { classifyFailure } from '../../storage/failure-classifier';

const logger = new Logger('GraphQL');

/**
 * Apollo `formatError` hook: every error leaves in the envelope of docs/api.md. An unexpected error
 * is logged here in full; the client sees only what it can act on: the database is unavailable
 * (503), the request ran past its deadline (503), or "Internal server error".
 */
export function formatLoyaltyError(
  formatted: GraphQLFormattedError,
  error: unknown,
): GraphQLFormattedError {
  const envelope = toErrorEnvelope(formatted);
  if (envelope.extensions?.code !== ErrorCode.INTERNAL_SERVER_ERROR) return envelope;
  const failure = classifyFailure(error);
  const cause = (error as { originalError?: unknown })?.originalError ?? error;
  const detail = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
  if (failure === ErrorCode.INTERNAL_SERVER_ERROR) logger.error(detail);
  else logger.warn(`${failure}: ${cause instanceof Error ? cause.message : String(cause)}`);
  const where = {
    ...(envelope.locations ? { locations: envelope.locations } : {}),
    ...(envelope.path ? { path: envelope.path } : {}),
  };
  return { ...envelopeFor(failure), ...where };
}
