/** Every error code the service answers with, and how each one reaches a client. */
export enum ErrorCode {
  TOKEN_REQUIRED = 'TOKEN_REQUIRED',
  INVALID_TOKEN = 'INVALID_TOKEN',
  INSUFFICIENT_SCOPE = 'INSUFFICIENT_SCOPE',
  RATE_LIMIT_EXCEEDED = 'RATE_LIMIT_EXCEEDED',
  SPACE_NOT_FOUND = 'SPACE_NOT_FOUND',
  INVALID_SPRINT_ID = 'INVALID_SPRINT_ID',
  INVALID_CURSOR = 'INVALID_CURSOR',
  QUEST_NOT_FOUND = 'QUEST_NOT_FOUND',
  INVALID_ARGUMENT = 'INVALID_ARGUMENT',
  OPERATION_NOT_SUPPORTED = 'OPERATION_NOT_SUPPORTED',
  QUERY_TOO_DEEP = 'QUERY_TOO_DEEP',
  TOO_MANY_ALIASES = 'TOO_MANY_ALIASES',
  QUERY_TOO_COSTLY = 'QUERY_TOO_COSTLY',
  REQUEST_TOO_LARGE = 'REQUEST_TOO_LARGE',
  MALFORMED_REQUEST = 'MALFORMED_REQUEST',
  SIGN_IN_REQUIRED = 'SIGN_IN_REQUIRED',
  CSRF_CHECK_FAILED = 'CSRF_CHECK_FAILED',
  TOKEN_NOT_FOUND = 'TOKEN_NOT_FOUND',
  PERMISSION_DENIED = 'PERMISSION_DENIED',
  NOT_FOUND = 'NOT_FOUND',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  MEMBER_NOT_FOUND = 'MEMBER_NOT_FOUND',
  INVITATION_NOT_FOUND = 'INVITATION_NOT_FOUND',
  ALREADY_EXISTS = 'ALREADY_EXISTS',
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  REQUEST_TIMEOUT = 'REQUEST_TIMEOUT',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
}

export type ErrorCategory =
  'AUTHENTICATION' | 'RATE_LIMIT' | 'NOT_FOUND' | 'VALIDATION' | 'UNAVAILABLE' | 'INTERNAL';

export interface ErrorDefinition {
  message: string;
  category: ErrorCategory;
  httpStatus: number;
}

export const ERROR_DEFINITIONS: Readonly<Record<ErrorCode, ErrorDefinition>> = {
  [ErrorCode.TOKEN_REQUIRED]: {
    message: 'Access token is required',
    category: 'AUTHENTICATION',
    httpStatus: 401,
  },
  [ErrorCode.INVALID_TOKEN]: {
    message: 'Invalid access token',
    category: 'AUTHENTICATION',
    httpStatus: 401,
  },
  [ErrorCode.INSUFFICIENT_SCOPE]: {
    message: 'Access token lacks the scope this endpoint requires',
    category: 'AUTHENTICATION',
    httpStatus: 403,
  },
  [ErrorCode.RATE_LIMIT_EXCEEDED]: {
    message: 'Rate limit exceeded',
    category: 'RATE_LIMIT',
    httpStatus: 429,
  },
  [ErrorCode.SPACE_NOT_FOUND]: {
    message: 'Space not found',
    category: 'NOT_FOUND',
    httpStatus: 200,
  },
  [ErrorCode.INVALID_SPRINT_ID]: {
    message: 'Invalid sprint ID',
    category: 'VALIDATION',
    httpStatus: 200,
  },
  [ErrorCode.INVALID_CURSOR]: {
    message: 'Invalid cursor',
    category: 'VALIDATION',
    httpStatus: 200,
  },
  [ErrorCode.QUEST_NOT_FOUND]: {
    message: 'Quest not found',
    category: 'NOT_FOUND',
    httpStatus: 200,
  },
  [ErrorCode.INVALID_ARGUMENT]: {
    message: 'Invalid argument',
    category: 'VALIDATION',
    httpStatus: 200,
  },
  [ErrorCode.OPERATION_NOT_SUPPORTED]: {
    message: 'Operation not supported',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.QUERY_TOO_DEEP]: {
    message: 'Query is too deep',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.TOO_MANY_ALIASES]: {
    message: 'Query has too many aliases',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.QUERY_TOO_COSTLY]: {
    message: 'Query is too costly',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.REQUEST_TOO_LARGE]: {
    message: 'Request body is too large',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.MALFORMED_REQUEST]: {
    message: 'Request must be a JSON object with a query',
    category: 'VALIDATION',
    httpStatus: 400,
  },
  [ErrorCode.SIGN_IN_REQUIRED]: {
    message: 'Sign in to the dashboard first',
    category: 'AUTHENTICATION',
    httpStatus: 401,
  },
  [ErrorCode.CSRF_CHECK_FAILED]: {
    message: 'Cross-site request refused: send the session CSRF token in x-csrf-token',
    category: 'AUTHENTICATION',
    httpStatus: 403,
  },
  [ErrorCode.TOKEN_NOT_FOUND]: {
    message: 'Token not found',
    category: 'NOT_FOUND',
    httpStatus: 404,
  },
  [ErrorCode.PERMISSION_DENIED]: {
    message: 'Your role does not allow this',
    category: 'AUTHENTICATION',
    httpStatus: 403,
  },
  [ErrorCode.NOT_FOUND]: {
    message: 'Not found',
    category: 'NOT_FOUND',
    httpStatus: 404,
  },
  [ErrorCode.METHOD_NOT_ALLOWED]: {
    message: 'Method not allowed',
    category: 'VALIDATION',
    httpStatus: 405,
  },
  [ErrorCode.MEMBER_NOT_FOUND]: {
    message: 'Member not found',
    category: 'NOT_FOUND',
    httpStatus: 404,
  },
  [ErrorCode.INVITATION_NOT_FOUND]: {
    message: 'Invitation not found, used or expired',
    category: 'NOT_FOUND',
    httpStatus: 404,
  },
  [ErrorCode.ALREADY_EXISTS]: {
    message: 'Already exists',
    category: 'VALIDATION',
    httpStatus: 409,
  },
  [ErrorCode.SERVICE_UNAVAILABLE]: {
    message: 'Service temporarily unavailable',
    category: 'UNAVAILABLE',
    httpStatus: 503,
  },
  [ErrorCode.REQUEST_TIMEOUT]: {
    message: 'Request timed out',
    category: 'UNAVAILABLE',
    httpStatus: 503,
  },
  [ErrorCode.INTERNAL_SERVER_ERROR]: {
    message: 'Internal server error',
    category: 'INTERNAL',
    httpStatus: 500,
  },
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return (
    typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_DEFINITIONS, value)
  );
}
