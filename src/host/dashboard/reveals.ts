import type { FastifyReply, FastifyRequest } from 'fastify';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { RevealedToken, RoleName } from './views/pages';
import { cookieHeader, readCookie } from './cookies';
import { appendCookie } from './notices';

/**
 * What a form's redirect hands the page that shows it once (Post/Redirect/Get): a new token's
 * value, a rotation's new value, an invitation link.
 */
export type Reveal =
  | { kind: 'token'; token: RevealedToken }
  | { kind: 'rotated'; token: RevealedToken; previousUntil: string | null }
  | {
      kind: 'invitation';
      spaceId: number;
      invitation: { id: string; email: string; role: RoleName; expiresAt: string; link: string };
    };

export const REVEAL_COOKIE = 'lb_reveal';
/** Long enough to follow the redirect; a value nobody took by then is gone for good. */
const REVEAL_TTL_SECONDS = 120;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * One-time reveals in an HttpOnly cookie, sealed with AES-256-GCM under a key every instance shares
 * (host_secrets), so that the page after the redirect may be served by any instance. The seal is
 * bound to the session (its hash is the additional data): another session, or the next one after
 * signing out, cannot open it. The page that shows it clears the cookie, so a reload shows nothing.
 */
export class OneTimeReveals {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('A reveal key has 32 bytes (AES-256)');
  }

  /** Sets the cookie on the redirect's reply. */
  put(request: FastifyRequest, reply: FastifyReply, sessionHash: string, reveal: Reveal): void {
    appendCookie(reply, revealCookie(request, this.seal(reveal, sessionHash), REVEAL_TTL_SECONDS));
  }

  /**
   * The reveal the request carries when it is of `kind` (and passes `accept`), cleared on the
   * reply so that it shows once; undefined otherwise, leaving a reveal meant for another page.
   */
  take<K extends Reveal['kind']>(
    request: FastifyRequest,
    reply: FastifyReply,
    sessionHash: string,
    kinds: readonly K[],
    accept: (reveal: Extract<Reveal, { kind: K }>) => boolean = () => true,
  ): Extract<Reveal, { kind: K }> | undefined {
    const sealed = readCookie(request, REVEAL_COOKIE);
    if (sealed === undefined || sealed === '') return undefined;
    const reveal = this.open(sealed, sessionHash);
    if (reveal === null) {
      // Stale, forged or another session's: of no use to anyone, so it goes.
      appendCookie(reply, revealCookie(request, '', 0));
      return undefined;
    }
    if (!(kinds as readonly string[]).includes(reveal.kind)) return undefined;
    const mine = reveal as Extract<Reveal, { kind: K }>;
    if (!accept(mine)) return undefined;
    appendCookie(reply, revealCookie(request, '', 0));
    return mine;
  }

  seal(reveal: Reveal, sessionHash: string, now = Date.now()): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(additionalData(sessionHash));
    const body = JSON.stringify({ until: now + REVEAL_TTL_SECONDS * 1000, reveal });
    const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The reveal of a seal made for this session and not yet expired; null for anything else. */
  open(value: string, sessionHash: string, now = Date.now()): Reveal | null {
    if (!/^[A-Za-z0-9_-]{40,4000}$/.test(value)) return null;
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      decipher.setAAD(additionalData(sessionHash));
      const body = Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
      const { until, reveal } = JSON.parse(body) as { until: number; reveal: Reveal };
      return typeof until === 'number' && until > now ? reveal : null;
    } catch {
      return null; // not sealed with this key for this session
    }
  }
}

const additionalData = (sessionHash: string) => Buffer.from(`lb-reveal:${sessionHash}`, 'utf8');

const revealCookie = (request: FastifyRequest, value: string, maxAge: number): string =>
  cookieHeader(request, REVEAL_COOKIE, value, maxAge, { path: '/dashboard' });
