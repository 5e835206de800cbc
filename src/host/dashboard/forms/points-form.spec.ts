import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { newFormKey, parseFormKey, parseReason, signedPoints } from './points-form';

const messageOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof LoyaltyException) return error.message;
    throw error;
  }
  return 'accepted';
};

describe('the points form', () => {
  const now = Date.UTC(2026, 0, 31, 12, 0, 0, 250);

  it('makes a fresh key each time, which carries the time it was made', () => {
    const key = newFormKey(now);
    expect(key).toMatch(
      /^dashboard:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(newFormKey(now)).not.toBe(key);
    expect(parseFormKey(key, now + 3_600_000)).toEqual({ key, renderedAt: now });
  });

  it('refuses a key that is none of its own, or from further ahead than clocks drift', () => {
    const out = 'This form is out of date: check the values and send it again';
    for (const key of [undefined, '', 'dashboard:x', `upload:${newFormKey(now).slice(10)}`])
      expect(messageOf(() => parseFormKey(key, now))).toBe(out);
    // A version 4 UUID has no time.
    expect(
      messageOf(() => parseFormKey('dashboard:2f1c6b9e-4a7d-4c1e-9b2a-0d6e5f4a3b21', now)),
    ).toBe(out);
    expect(messageOf(() => parseFormKey(newFormKey(now + 4 * 60_000), now))).toBe('accepted');
    expect(messageOf(() => parseFormKey(newFormKey(now + 6 * 60_000), now))).toBe(out);
  });

  it('grants or deducts a positive amount, and never takes a sign typed in the amount', () => {
    expect(signedPoints('grant', '25')).toBe(25);
    expect(signedPoints('deduct', ' 25 ')).toBe(-25);
    expect(signedPoints('grant', '1000000000')).toBe(1_000_000_000);
    const amount = 'Points must be a whole number from 1 to 1,000,000,000';
    for (const typed of ['-5', '0', '1.5', '', 'ten', '1000000001', '+5'])
      expect({ typed, message: messageOf(() => signedPoints('deduct', typed)) }).toEqual({
        typed,
        message: amount,
      });
    for (const direction of [undefined, '', 'GRANT', 'subtract'])
      expect(messageOf(() => signedPoints(direction, '5'))).toBe(
        'Choose whether to grant or deduct the points',
      );
  });

  it('keeps a reason as the ledger takes it: trimmed, 1 to 200 characters on one line', () => {
    expect(parseReason('  Community call host ', 'Reason')).toBe('Community call host');
    expect(parseReason('x'.repeat(200), 'Reason')).toHaveLength(200);
    expect(messageOf(() => parseReason(undefined, 'Reason'))).toBe('Reason is required');
    expect(messageOf(() => parseReason('   ', 'Reason'))).toBe('Reason is required');
    expect(messageOf(() => parseReason('x'.repeat(201), 'Reason'))).toBe(
      'Reason must be at most 200 characters',
    );
    for (const text of ['two\nlines', 'nul\u0000', 'lone \ud800 surrogate'])
      expect(messageOf(() => parseReason(text, 'Reason'))).toBe(
        'Reason must be text on one line, without control characters',
      );
  });
});
