import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Access tokens look like GitHub's: a recognisable prefix, 256 bits of randomness and a CRC32
 * checksum, all base62. Secret scanners can match the pattern, and a mistyped or truncated token is
 * rejected by its checksum without a database round trip.
 *
 *   lpt_<43 base62 chars of randomness><6 base62 chars of checksum>
 */
export const TOKEN_PREFIX = 'lpt_';
const RANDOM_CHARS = 43; // 62^43 > 2^256
const CHECKSUM_CHARS = 6; // 62^6 > 2^32
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** How much of a token is kept in clear to tell tokens apart in lists. */
export const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;

function toBase62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out.padStart(width, '0');
}

function checksumOf(body: string): string {
  return toBase62(BigInt(crc32(body)), CHECKSUM_CHARS);
}

export function generateToken(): string {
  const random = BigInt(`0x${randomBytes(32).toString('hex')}`);
  const body = TOKEN_PREFIX + toBase62(random, RANDOM_CHARS);
  return body + checksumOf(body);
}

/** True when `token` has the shape and a valid checksum; says nothing of whether it exists. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(0, token.length - CHECKSUM_CHARS);
  return checksumOf(body) === token.slice(token.length - CHECKSUM_CHARS);
}

/** Tokens carry 256 random bits, so a fast one-way hash is enough; the value is never stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function displayPrefixOf(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}
