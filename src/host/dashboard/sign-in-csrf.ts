import type { FastifyRequest } from 'fastify';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a sign-in form may be sent after it was shown; its cookie lasts as long. */
export const SIGN_IN_FORM_TTL_SECONDS = 3600;

/** 32 random bytes (the cookie), an HMAC-SHA256 (the field's second part): 43 base64url characters. */
const NONCE = /^[A-Za-z0-9_-]{43}$/;
const FIELD = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * The sign-in form's CSRF pairs, before there is a session to hold a token: the cookie holds a
 * random nonce, the form field `expiry.HMAC-SHA256(key, expiry and nonce)`. Whoever can plant a
 * cookie (a sibling subdomain, a network on plain HTTP) but does not know the key cannot make a
 * field that matches it, as they could for a plain double submit.
 */
export class SignInCsrf {
  constructor(private readonly key: Buffer) {}

  /** A fresh pair: `cookie` for the sign-in cookie, `field` for the form's `_csrf`. */
  mint(now = Date.now()): { cookie: string; field: string } {
    const nonce = randomBytes(32).toString('base64url');
    const expires = Math.floor(now / 1000) + SIGN_IN_FORM_TTL_SECONDS;
    return { cookie: nonce, field: `${expires}.${this.mac(expires, nonce).toString('base64url')}` };
  }

  /** Whether `field` was minted with `cookie` under this key and has not expired (constant time). */
  check(cookie: string | undefined, field: unknown, now = Date.now()): boolean {
    if (typeof cookie !== 'string' || !NONCE.test(cookie) || typeof field !== 'string')
      return false;
    const match = FIELD.exec(field);
    if (!match) return false;
    const expires = Number(match[1]);
    if (expires * 1000 <= now) return false;
    const provided = Buffer.from(match[2], 'base64url');
    const expected = this.mac(expires, cookie);
    return provided.length === expected.length && timingSafeEqual(provided, expected);
  }

  private mac(expires: number, nonce: string): Buffer {
    return createHmac('sha256', this.key).update(`lb-sign-in-csrf:${expires}:${nonce}`).digest();
  }
}

const SIGNER = Symbol('signInCsrf');
type WithSigner = FastifyRequest & { [SIGNER]?: SignInCsrf };

/** Hands a request the deployment's signer, for a sign-in page it may be answered with. */
export function provideSignInCsrf(request: FastifyRequest, signer: SignInCsrf): void {
  (request as WithSigner)[SIGNER] = signer;
}

/** The signer the CsrfGuard handed this request. */
export function signInCsrfOf(request: FastifyRequest): SignInCsrf {
  const signer = (request as WithSigner)[SIGNER];
  if (!signer)
    throw new Error('The sign-in form is answered only after the CsrfGuard of a started app');
  return signer;
}
