import { ErrorCode } from '../common/errors/error-code';

/** The database could not be reached or went away mid-query. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_CONNECTION_KILLED',
  'SQLITE_BUSY',
  // Still deadlocked after the transaction runner's retries: a retry later will do.
  'ER_LOCK_DEADLOCK',
  // PostgreSQL (SQLSTATE): connection exceptions (class 08), too many connections, the server
  // shutting down or starting, and deadlocks and serialization failures left after the retries.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '40P01',
  '40001',
]);

/**
 * What node-postgres says, with no code, when the server cannot be reached or the connection
 * drops: its own words, matched whole.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/** The database cut a statement off at its deadline (statement time or a lock wait). */
const TIMEOUT_CODES = new Set([
  'ER_STATEMENT_TIMEOUT',
  'ER_QUERY_TIMEOUT',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
  // PostgreSQL: query_canceled (statement_timeout), lock_not_available (lock_timeout).
  '57014',
  '55P03',
]);
/** Same, by MySQL/MariaDB error number (mysql2 has no name for MariaDB's 1969). */
const TIMEOUT_ERRNOS = new Set([1969, 3024, 1205, 1317]);
const UNAVAILABLE_ERRNOS = new Set([2002, 2003, 2006, 2013, 1053, 1040, 1927]);

/**
 * What an unexpected error means for the client: a database outage is SERVICE_UNAVAILABLE, a
 * statement stopped at its deadline is REQUEST_TIMEOUT, anything else stays internal.
 */
export function classifyFailure(error: unknown): ErrorCode {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const { code, errno } = current as { code?: unknown; errno?: unknown };
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return ErrorCode.REQUEST_TIMEOUT;
    if (typeof errno === 'number' && TIMEOUT_ERRNOS.has(errno)) return ErrorCode.REQUEST_TIMEOUT;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code))
      return ErrorCode.SERVICE_UNAVAILABLE;
    if (typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno))
      return ErrorCode.SERVICE_UNAVAILABLE;
    const { message } = current as { message?: unknown };
    if (
      code === undefined &&
      typeof message === 'string' &&
      UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))
    )
      return ErrorCode.SERVICE_UNAVAILABLE;
    const next = current as { originalError?: unknown; driverError?: unknown; cause?: unknown };
    current = next.originalError ?? next.driverError ?? next.cause;
  }
  return ErrorCode.INTERNAL_SERVER_ERROR;
}
