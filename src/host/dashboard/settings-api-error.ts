import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, ERROR_DEFINITIONS } from '../../common/errors/error-code';
import { envelopeFor } from '../../common/errors/error-envelope';

/**
 * Over plain HTTP, the codes GraphQL answers in a 200 (its errors ride beside data) take the
 * status their meaning has: a bad argument is 400, a space not found 404.
 */
const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.INVALID_ARGUMENT]: 400,
  [ErrorCode.SPACE_NOT_FOUND]: 404,
  [ErrorCode.QUEST_NOT_FOUND]: 404,
};

export const settingsApiStatus = (code: ErrorCode) =>
  HTTP_STATUS[code] ?? ERROR_DEFINITIONS[code].httpStatus;

/** Sends the settings API's error envelope. */
export function sendSettingsApiError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message?: string,
): FastifyReply {
  const status = settingsApiStatus(code);
  const envelope = envelopeFor(code, message, request.id);
  return reply.code(status).send({
    errors: [{ ...envelope, extensions: { ...envelope.extensions, http_status: status } }],
  });
}
