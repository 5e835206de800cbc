import { LoyaltyException } from '../common/errors/loyalty.exception';
import { parseRotationGrace, parseTokenExpiry } from './token-expiry';

const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const DAY = 86_400_000;

function refusal(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(LoyaltyException);
    expect((error as LoyaltyException).code).toBe('INVALID_ARGUMENT');
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('parseTokenExpiry', () => {
  it('reads 30d and 90d from now, and never as null', () => {
    expect(parseTokenExpiry('30d', NOW)).toBe(NOW + 30 * DAY);
    expect(parseTokenExpiry('90d', NOW)).toBe(NOW + 90 * DAY);
    expect(parseTokenExpiry(' 90D ', NOW)).toBe(NOW + 90 * DAY);
    expect(parseTokenExpiry('never', NOW)).toBeNull();
    expect(parseTokenExpiry('Never', NOW)).toBeNull();
  });

  it('reads null (JSON for "no expiry") as never', () => {
    expect(parseTokenExpiry(null, NOW)).toBeNull();
    expect(parseTokenExpiry(JSON.parse('{"expires":null}').expires, NOW)).toBeNull();
  });

  it('reads a date as the end of that day, UTC', () => {
    expect(new Date(parseTokenExpiry('2026-12-31', NOW)!).toISOString()).toBe(
      '2026-12-31T23:59:59.999Z',
    );
    // Today still has some hours to run.
    expect(new Date(parseTokenExpiry('2026-03-10', NOW)!).toISOString()).toBe(
      '2026-03-10T23:59:59.999Z',
    );
    expect(new Date(parseTokenExpiry('2028-02-29', NOW)!).toISOString()).toBe(
      '2028-02-29T23:59:59.999Z',
    );
  });

  it('reads a date-time, in UTC unless it names a zone', () => {
    expect(parseTokenExpiry('2026-06-01T08:30:00Z', NOW)).toBe(Date.parse('2026-06-01T08:30:00Z'));
    expect(parseTokenExpiry('2026-06-01T08:30', NOW)).toBe(Date.parse('2026-06-01T08:30:00Z'));
    expect(parseTokenExpiry('2026-06-01T08:30:15.250+02:00', NOW)).toBe(
      Date.parse('2026-06-01T06:30:15.250Z'),
    );
    expect(parseTokenExpiry('2026-06-01T08:30:00-05:30', NOW)).toBe(
      Date.parse('2026-06-01T14:00:00Z'),
    );
  });

  it('refuses a moment in the past, or now', () => {
    expect(refusal(() => parseTokenExpiry('2026-03-09', NOW))).toMatch(
      /^Token expiry "2026-03-09" is in the past: use 30d, 90d, never, a date YYYY-MM-DD/,
    );
    expect(refusal(() => parseTokenExpiry('2026-03-10T12:00:00Z', NOW))).toMatch(/in the past/);
    expect(refusal(() => parseTokenExpiry('1999-01-01T00:00:00Z', NOW))).toMatch(/in the past/);
  });

  it('refuses more than 5 years ahead', () => {
    expect(parseTokenExpiry('2031-03-10T12:00:00Z', NOW)).toBe(Date.parse('2031-03-10T12:00:00Z'));
    expect(refusal(() => parseTokenExpiry('2031-03-10T12:00:01Z', NOW))).toMatch(
      /^Token expiry "2031-03-10T12:00:01Z" is more than 5 years ahead: use 30d, 90d, never/,
    );
    expect(refusal(() => parseTokenExpiry('2099-01-01', NOW))).toMatch(/more than 5 years/);
  });

  it.each([
    '',
    '7d',
    '30',
    'tomorrow',
    '2026-02-30',
    '2026-13-01',
    '2026-6-1',
    '2026-06-01T24:00:00Z',
    '2026-06-01T08:30:00+25:00',
    '2026-06-01 08:30:00',
    '2026-06-01T08:30:00Zjunk',
  ])('refuses %j, listing what is accepted', (input) => {
    expect(refusal(() => parseTokenExpiry(input, NOW))).toMatch(
      /is not understood: use 30d, 90d, never, a date YYYY-MM-DD \(the token expires at the end of that day, UTC\) or an ISO 8601 date-time such as 2030-01-31T18:00:00Z \(UTC when it names no zone\), no more than 5 years ahead$/,
    );
  });

  it.each([undefined, 30, { days: 30 }, ['30d']])('refuses %j, which is no text', (input) => {
    expect(refusal(() => parseTokenExpiry(input, NOW))).toMatch(
      /^Token expiry must be one of: 30d, 90d, never, a date YYYY-MM-DD/,
    );
  });

  it('shortens a long input in its message', () => {
    const message = refusal(() => parseTokenExpiry('x'.repeat(500), NOW));
    expect(message).toContain(`"${'x'.repeat(40)}..."`);
    expect(message.length).toBeLessThan(400);
  });
});

describe('parseRotationGrace', () => {
  it.each([
    [0, 0],
    [1, 1000],
    [3600, 3_600_000],
    [2_592_000, 2_592_000_000],
    ['0', 0],
    [' 86400 ', 86_400_000],
    ['2592000', 2_592_000_000],
  ])('reads %j seconds as %d ms', (input, ms) => {
    expect(parseRotationGrace(input)).toBe(ms);
  });

  it.each([
    -1,
    1.5,
    2_592_001,
    NaN,
    Infinity,
    '-1',
    '1.5',
    '1e3',
    '',
    'soon',
    '2592001',
    null,
    true,
  ])('refuses %j', (input) => {
    expect(refusal(() => parseRotationGrace(input))).toMatch(
      /^Rotation grace .* must be a whole number of seconds from 0 \(the old token stops at once\) to 2592000 \(30 days\)$/,
    );
  });
});
