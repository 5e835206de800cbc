import { randomBytes } from 'node:crypto';
import { SIGN_IN_FORM_TTL_SECONDS, SignInCsrf } from './sign-in-csrf';

describe('SignInCsrf', () => {
  const signer = new SignInCsrf(randomBytes(32));
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('accepts the pair it minted, within the form lifetime', () => {
    const { cookie, field } = signer.mint(now);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(field).not.toContain(cookie);
    expect(signer.check(cookie, field, now)).toBe(true);
    expect(signer.check(cookie, field, now + (SIGN_IN_FORM_TTL_SECONDS - 1) * 1000)).toBe(true);
    expect(signer.check(cookie, field, now + SIGN_IN_FORM_TTL_SECONDS * 1000)).toBe(false);
  });

  it('refuses a plain double submit: a cookie equal to the field, whatever the value', () => {
    const { cookie, field } = signer.mint(now);
    expect(signer.check(field, field, now)).toBe(false);
    expect(signer.check(cookie, cookie, now)).toBe(false);
    const chosen = 'a'.repeat(43);
    expect(signer.check(chosen, chosen, now)).toBe(false);
  });

  it("refuses one pair's field with another's cookie, and a pair from another deployment", () => {
    const first = signer.mint(now);
    const second = signer.mint(now);
    expect(signer.check(first.cookie, second.field, now)).toBe(false);
    const elsewhere = new SignInCsrf(randomBytes(32)).mint(now);
    expect(signer.check(elsewhere.cookie, elsewhere.field, now)).toBe(false);
  });

  it('refuses a field whose expiry was moved, and junk of every kind', () => {
    const { cookie, field } = signer.mint(now);
    const [expires, mac] = field.split('.');
    expect(signer.check(cookie, `${Number(expires) + 3600}.${mac}`, now)).toBe(false);
    for (const junk of [undefined, null, 42, ['x'], '', '.', `${expires}.`, `x.${mac}`, mac])
      expect(signer.check(cookie, junk, now)).toBe(false);
    for (const junkCookie of [undefined, '', 'short', `${cookie}x`])
      expect(signer.check(junkCookie, field, now)).toBe(false);
  });
});
