/**
 * What a request was, for its metrics and its log line: labels set on the request by whoever
 * learns them (the GraphQL plugin, the response cache), read once the answer is sent.
 */
const OPERATION = Symbol('operation');

/** The GraphQL operation of a POST /query request: its root fields (see operationLabel). */
export function operationOf(request: object): string | undefined {
  return (request as Record<symbol, string | undefined>)[OPERATION];
}

export function setOperation(request: object, operation: string): void {
  (request as Record<symbol, string | undefined>)[OPERATION] = operation;
}
