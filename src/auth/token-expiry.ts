import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';

const DAY_MS = 86_400_000;
/** The longest a rotated-out token may keep working: 30 days. */
export const MAX_ROTATION_GRACE_SECONDS = 2_592_000;
export const MAX_ROTATION_GRACE_MS = MAX_ROTATION_GRACE_SECONDS * 1000;
/** A token may be given an expiry at most this many years ahead. */
export const MAX_TOKEN_LIFETIME_YEARS = 5;

/** The relative choices, in days. */
const RELATIVE: Readonly<Record<string, number>> = { '30d': 30, '90d': 90 };

const ACCEPTED_EXPIRIES =
  '30d, 90d, never, a date YYYY-MM-DD (the token expires at the end of that day, UTC) or an ' +
  'ISO 8601 date-time such as 2030-01-31T18:00:00Z (UTC when it names no zone), ' +
  `no more than ${MAX_TOKEN_LIFETIME_YEARS} years ahead`;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$/i;

function invalid(message: string): LoyaltyException {
  return new LoyaltyException(ErrorCode.INVALID_ARGUMENT, message);
}

/** An input as a message may quote it: never long. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

/** Epoch ms of a calendar date-time in UTC, or NaN when a field is out of its range (Feb 30). */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return NaN;
  const at = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  return new Date(at).getUTCDate() === d ? at : NaN;
}

/** The latest expiry a token may be given, `MAX_TOKEN_LIFETIME_YEARS` calendar years from now. */
export function latestTokenExpiry(now: number): number {
  const limit = new Date(now);
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_TOKEN_LIFETIME_YEARS);
  return limit.getTime();
}

/** Reads a moment: a date (the end of that day, UTC) or a date-time; NaN when it is neither. */
function momentOf(text: string): number {
  const date = DATE.exec(text);
  if (date) {
    const [, y, mo, d] = date.map(Number);
    return utc(y, mo, d, 23, 59, 59, 999);
  }
  const parts = DATE_TIME.exec(text);
  if (!parts) return NaN;
  const [, y, mo, d, h, mi, s = '0', fraction = '0', zone = 'Z'] = parts;
  const ms = Math.floor(Number(`0.${fraction}`) * 1000);
  const local = utc(+y, +mo, +d, +h, +mi, +s, ms);
  if (zone.toUpperCase() === 'Z') return local;
  const [zh, zm] = zone.slice(1).split(':').map(Number);
  if (zh > 23 || zm > 59) return NaN;
  const offset = (zh * 60 + zm) * 60_000;
  return zone.startsWith('+') ? local - offset : local + offset;
}

/**
 * A token's expiry as chosen by a person (a form, the command line, a JSON body): `"30d"` and
 * `"90d"` from `now`, `"never"` or null (never: JSON's way to say "no expiry"), a date
 * `YYYY-MM-DD` (the end of that day, UTC) or an ISO 8601 date-time. Returns epoch ms, or null for
 * never. A moment not after `now`, more than {@link MAX_TOKEN_LIFETIME_YEARS} years ahead, or
 * anything else (undefined included: a caller decides what a missing choice means) is
 * INVALID_ARGUMENT, with a message that lists what is accepted.
 */
export function parseTokenExpiry(input: unknown, now: number = Date.now()): number | null {
  if (input === null) return null;
  if (typeof input !== 'string') {
    throw invalid(`Token expiry must be one of: ${ACCEPTED_EXPIRIES}`);
  }
  const text = input.trim();
  const lower = text.toLowerCase();
  if (lower === 'never') return null;
  const days = RELATIVE[lower];
  if (days !== undefined) return now + days * DAY_MS;
  const at = momentOf(text);
  if (Number.isNaN(at)) {
    throw invalid(`Token expiry ${shown(input)} is not understood: use ${ACCEPTED_EXPIRIES}`);
  }
  if (at <= now) {
    throw invalid(`Token expiry ${shown(input)} is in the past: use ${ACCEPTED_EXPIRIES}`);
  }
  if (at > latestTokenExpiry(now)) {
    throw invalid(
      `Token expiry ${shown(input)} is more than ${MAX_TOKEN_LIFETIME_YEARS} years ahead: use ${ACCEPTED_EXPIRIES}`,
    );
  }
  return at;
}

/**
 * How long a rotated-out token keeps working, as chosen by a person: a whole number of seconds
 * from 0 (revoked at once) to {@link MAX_ROTATION_GRACE_SECONDS} (30 days), given as a number
 * or a string of digits. Returns milliseconds; anything else is INVALID_ARGUMENT.
 */
export function parseRotationGrace(input: unknown): number {
  const seconds =
    typeof input === 'number'
      ? input
      : typeof input === 'string' && /^\d{1,10}$/.test(input.trim())
        ? Number(input.trim())
        : NaN;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_ROTATION_GRACE_SECONDS) {
    throw invalid(
      `Rotation grace ${shown(input)} must be a whole number of seconds from 0 (the old token ` +
        `stops at once) to ${MAX_ROTATION_GRACE_SECONDS} (30 days)`,
    );
  }
  return seconds * 1000;
}
