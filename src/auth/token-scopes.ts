import type { ValueTransformer } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';

/**
 * What a token may be used for, chosen when it is created: `query` is POST /query (the GraphQL
 * API), `ingest` is POST /ingest (sending records). A token created without naming any gets
 * {@link DEFAULT_TOKEN_SCOPES}.
 */
export const TOKEN_SCOPES = ['query', 'ingest'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
export const DEFAULT_TOKEN_SCOPES: readonly TokenScope[] = ['query'];

const ALLOWED = TOKEN_SCOPES.join(', ');

function isTokenScope(value: unknown): value is TokenScope {
  return typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);
}

/** An input value as it may appear in a message: quoted, and never long. */
function shown(value: unknown): string {
  const short = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}...` : text);
  return typeof value === 'string'
    ? JSON.stringify(short(value))
    : short(JSON.stringify(value) ?? String(value));
}

/**
 * Validates a list of scopes from outside (JSON, a form, the command line): every entry one of
 * {@link TOKEN_SCOPES}, at least one. Duplicates collapse; the result is sorted, as stored.
 * Anything else is INVALID_ARGUMENT with a message naming the allowed scopes.
 */
export function parseTokenScopes(input: unknown): TokenScope[] {
  if (!Array.isArray(input))
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `scopes must be a list of token scopes (${ALLOWED})`,
    );
  const scopes = new Set<TokenScope>();
  for (const value of input as unknown[]) {
    if (!isTokenScope(value))
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `Unknown token scope ${shown(value)}: the scopes are ${ALLOWED}`,
      );
    scopes.add(value);
  }
  if (scopes.size === 0)
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `A token needs at least one scope (${ALLOWED})`,
    );
  return [...scopes].sort();
}

export function hasScope(token: { scopes: readonly TokenScope[] }, scope: TokenScope): boolean {
  return token.scopes.includes(scope);
}

/** The refusal of a valid token that was not given `scope`: 403 INSUFFICIENT_SCOPE. */
export function insufficientScope(scope: TokenScope): LoyaltyException {
  return new LoyaltyException(
    ErrorCode.INSUFFICIENT_SCOPE,
    `Access token lacks the '${scope}' scope`,
  );
}

/**
 * The `scopes` column: a comma-separated, sorted list. A stored name this version does not know
 * grants nothing.
 */
export const asScopeList: ValueTransformer = {
  to: (value: readonly TokenScope[] | undefined) =>
    value === undefined ? undefined : [...new Set(value)].sort().join(','),
  from: (value: string | null): TokenScope[] =>
    value === null ? [] : [...new Set(value.split(',').filter(isTokenScope))].sort(),
};
