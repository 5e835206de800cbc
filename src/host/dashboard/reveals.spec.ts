import { randomBytes } from 'node:crypto';
import { OneTimeReveals, Reveal } from './reveals';

const REVEAL: Reveal = {
  kind: 'token',
  token: {
    name: 'exporter',
    token: 'lpt_secretvalue',
    scopes: ['query'],
    spaceId: null,
    expiresAt: null,
  },
};

describe('one-time reveals', () => {
  const key = randomBytes(32);
  const reveals = new OneTimeReveals(key);

  it('opens a seal for the session it was made for, and hides the value from anyone reading it', () => {
    const sealed = reveals.seal(REVEAL, 'session-a');
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('lpt_secretvalue');
    expect(reveals.open(sealed, 'session-a')).toEqual(REVEAL);
    // Another instance of the deployment, with the same key, opens it too.
    expect(new OneTimeReveals(Buffer.from(key)).open(sealed, 'session-a')).toEqual(REVEAL);
  });

  it('refuses another session, another key, a changed byte, an expired seal and junk', () => {
    const now = Date.now();
    const sealed = reveals.seal(REVEAL, 'session-a', now);
    expect(reveals.open(sealed, 'session-b', now)).toBeNull();
    expect(new OneTimeReveals(randomBytes(32)).open(sealed, 'session-a', now)).toBeNull();
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1] ^= 1;
    expect(reveals.open(bytes.toString('base64url'), 'session-a', now)).toBeNull();
    expect(reveals.open(sealed, 'session-a', now + 121_000)).toBeNull();
    for (const junk of ['', 'x', '%%%', 'A'.repeat(5000), 'A'.repeat(60)])
      expect(reveals.open(junk, 'session-a', now)).toBeNull();
  });

  it('needs an AES-256 key', () => {
    expect(() => new OneTimeReveals(randomBytes(16))).toThrow('32 bytes');
  });
});
