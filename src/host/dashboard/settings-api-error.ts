import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, ERROR_DEFINITIONS } from '../../common/errors/error-code';
import { envelopeFor } from '../../common/errors/error-envelope';

/**
 * Sends the settings API's error envelope. INVALID_ARGUMENT is defined as 200 for GraphQL, where
 * errors ride in a 200; over plain HTTP it is a 400.
 */
export function sendSettingsApiError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message?: string,
): FastifyReply {
  const status = code === ErrorCode.INVALID_ARGUMENT ? 400 : ERROR_DEFINITIONS[code].httpStatus;
  const envelope = envelopeFor(code, message, request.id);
  return reply.code(status).send({
    errors: [{ ...envelope, extensions: { ...envelope.extensions, http_status: status } }],
  });
}
