/**
 * What a span may say about a request or a statement: the shape of it, never a value a client
 * sent. Plain functions, free of OpenTelemetry, so they are tested alone.
 */

/** Longer statements (a bulk insert's thousand `(?, ?, ?)` groups) are cut here. */
export const MAX_STATEMENT_CHARS = 2048;

/**
 * The statement as the code wrote it, placeholders and all: the values bound to them are never
 * part of it (every statement of the service is parameterised).
 */
export function statementText(sql: string): string {
  return sql.length > MAX_STATEMENT_CHARS ? `${sql.slice(0, MAX_STATEMENT_CHARS)}…` : sql;
}

/** A span name for a statement: its first word (SELECT, INSERT, BEGIN...), as mysql2's spans are named. */
export function statementVerb(sql: string): string {
  const match = /^\s*([A-Za-z]{1,32})/.exec(sql);
  return match ? match[1].toUpperCase() : 'SQL';
}

/** A query string with each value replaced, keeping the names: `a=REDACTED&b=REDACTED`. */
export function redactQueryValues(search: string): string {
  const names: string[] = [];
  for (const name of new URLSearchParams(search).keys()) names.push(`${name}=REDACTED`);
  return names.join('&');
}

export interface GraphqlOperation {
  type?: 'query' | 'mutation' | 'subscription';
  name?: string;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,127}$/;
/** The document's first operation: after blanks, commas and comments, only at its very start. */
const FIRST_OPERATION =
  /^(?:[\s,\uFEFF]|#[^\n\r]*)*(?:(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?|(\{))/;
/** How much of a document is looked at for its first operation (a bounded, anchored match). */
const HEAD_CHARS = 1024;

/**
 * The operation of a GraphQL request body: `operationName` when the client sent one, else what the
 * document starts with. Read from the head of the document only, so it costs the same whatever the
 * document's size; arguments and variables are never read.
 */
export function graphqlOperationOf(body: unknown): GraphqlOperation {
  if (body === null || typeof body !== 'object') return {};
  const { query, operationName } = body as { query?: unknown; operationName?: unknown };
  const named = typeof operationName === 'string' && NAME.test(operationName);
  const first = typeof query === 'string' ? FIRST_OPERATION.exec(query.slice(0, HEAD_CHARS)) : null;
  const firstType = first?.[3] ? 'query' : (first?.[1] as GraphqlOperation['type']);
  const firstName = first?.[2];
  const operation: GraphqlOperation = {};
  if (named) operation.name = operationName;
  else if (firstName) operation.name = firstName;
  // The first operation's type is this request's only when it is the one the name selects.
  if (firstType && (!named || firstName === operationName)) operation.type = firstType;
  return operation;
}

/**
 * A database error message with its quoted values masked: MySQL quotes values in single quotes,
 * PostgreSQL ends some messages with one in double quotes (names it quotes elsewhere are kept).
 */
export function maskQuoted(message: string): string {
  return message
    .replace(/'(?:[^'\\]|\\.|'')*'/g, "'?'")
    .replace(/: "(?:[^"\\]|\\.|"")*"$/, ': "?"');
}
