import { ErrorCode } from '../errors/error-code';
import { LoyaltyException } from '../errors/loyalty.exception';

const ABORT = Symbol('loyalty.abort');

/** Gives a request the controller its deadline aborts (the query gate does, for /query). */
export function attachDeadline(request: object): AbortController {
  const controller = new AbortController();
  (request as Record<symbol, AbortController>)[ABORT] = controller;
  return controller;
}

/** The signal a request's work should stop on: aborted at the request's deadline. */
export function deadlineSignalOf(request: object | undefined): AbortSignal | undefined {
  return request
    ? (request as Record<symbol, AbortController | undefined>)[ABORT]?.signal
    : undefined;
}

/**
 * Throws REQUEST_TIMEOUT once the request's deadline has passed (it was already answered 503):
 * called before work that reads the database, so that the rest of a timed-out request stops
 * instead of holding connections. A request without a deadline (a host without our gate) is
 * never refused.
 */
export function throwIfPastDeadline(request: object | undefined): void {
  if (deadlineSignalOf(request)?.aborted) throw new LoyaltyException(ErrorCode.REQUEST_TIMEOUT);
}
