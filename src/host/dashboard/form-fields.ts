import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
/*
 * How the dashboard's handlers read forms and query strings, and answer Post/Redirect/Get: one
 * reading for every page, so that a forged form (a field sent twice, a field that is no string)
 * is read alike everywhere.
 */

/** A form's fields as the body parser hands them over. */
export type Form = Record<string, unknown>;

/** What a Post/Redirect/Get handler returns for its @Redirect(). */
export type SeeOther = { url: string; statusCode: 303 };

export const seeOther = (url: string): SeeOther => ({ url, statusCode: 303 });

/** A form field as typed: '' when absent or not text; a field sent twice is not a value. */
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A query-string value as one string: a repeated parameter is not a value. */
export const param = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** A form field that may repeat (checkboxes of one name): every value sent, none when absent. */
export const values = (value: unknown): unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * `keepTokens` as a form's checkbox ("on") or an endpoint's query (`true`/`false`): whether a
 * leaving member's tokens stay. Absent: they are revoked. Anything else is refused.
 */
export function keepTokensOf(value: unknown): boolean {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'on' || value === 'true') return true;
  throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'keepTokens must be true or false');
}
