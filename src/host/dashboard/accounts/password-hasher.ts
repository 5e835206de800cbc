import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';

/*
 * Passwords are hashed with scrypt (memory-hard): N = 2^15, r = 8, p = 1 takes 32 MiB and about
 * 100 ms here, which is what makes a stolen table slow to attack. The parameters travel with the
 * hash, so they can be raised later without breaking old hashes.
 */
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const MAX_MEMORY = 64 * 1024 * 1024;

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password, salt, KEY_BYTES, { N: n, r, p, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** False for a wrong password or an unreadable hash; takes the same time either way. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const key = await scrypt(password, salt, n, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Hashed once, then verified against whenever an email is unknown, so both answers take as long. */
export const UNKNOWN_USER_HASH = hashPassword(randomBytes(16).toString('hex'));
