import { randomBytes } from 'node:crypto';
import { ErrorCode } from '../../../common/errors/error-code';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { MAX_POINTS_PER_RECORD, MAX_REASON_LENGTH } from '../../../records/ingest-record';

/*
 * The single-address points form: what it sends, checked before it becomes a points record. Pure
 * functions, so that the rules have unit tests of their own.
 */

/** A form key's time may run this far ahead of ours (another instance's clock). */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;

const FORM_KEY =
  /^dashboard:([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const invalid = (message: string) => new LoyaltyException(ErrorCode.INVALID_ARGUMENT, message);

/** The key of one rendering of the form, and when it was rendered. */
export interface FormKey {
  key: string;
  renderedAt: number;
}

/**
 * A key for one rendering of the form: `dashboard:` and a UUID version 7, whose first 48 bits are
 * `now` in milliseconds. Sending the form twice sends the same key twice, and the ledger holds
 * the points of the first sending (TeamActions.adjustPoints).
 */
export function newFormKey(now: number): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x70;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  const groups = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20)];
  return `dashboard:${groups.join('-')}-${hex.slice(20)}`;
}

/** The key a form sent and its time; refused when it is none of ours or from the future. */
export function parseFormKey(value: unknown, now: number): FormKey {
  const match = typeof value === 'string' ? FORM_KEY.exec(value) : null;
  const renderedAt = match ? parseInt(match[1] + match[2], 16) : NaN;
  if (!match || renderedAt > now + MAX_CLOCK_SKEW_MS)
    throw invalid('This form is out of date: check the values and send it again');
  return { key: value as string, renderedAt };
}

/**
 * A grant or a deduction as the form sends it: a choice and a positive amount, never a sign typed
 * in the amount, so that nobody deducts by a stray minus. Answers the signed points.
 */
export function signedPoints(direction: unknown, amount: unknown): number {
  if (direction !== 'grant' && direction !== 'deduct')
    throw invalid('Choose whether to grant or deduct the points');
  const text = typeof amount === 'string' ? amount.trim() : '';
  const points = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(points >= 1 && points <= MAX_POINTS_PER_RECORD))
    throw invalid(
      `Points must be a whole number from 1 to ${MAX_POINTS_PER_RECORD.toLocaleString('en-US')}`,
    );
  return direction === 'grant' ? points : -points;
}

/**
 * Why points are granted or deducted, as the ledger keeps it: trimmed, 1 to 200 characters of
 * well-formed text on one line. `what` names the field in the message ("Reason").
 */
export function parseReason(value: unknown, what: string): string {
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed === '') throw invalid(`${what} is required`);
  if (trimmed.length > MAX_REASON_LENGTH)
    throw invalid(`${what} must be at most ${MAX_REASON_LENGTH} characters`);
  if (LONE_SURROGATE.test(trimmed) || CONTROL.test(trimmed))
    throw invalid(`${what} must be text on one line, without control characters`);
  return trimmed;
}
