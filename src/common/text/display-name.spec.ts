import { LoyaltyException } from '../errors/loyalty.exception';
import { parseDisplayName } from './display-name';

function refusal(value: unknown): string {
  try {
    parseDisplayName(value, 'Token name');
  } catch (error) {
    expect(error).toBeInstanceOf(LoyaltyException);
    expect((error as LoyaltyException).code).toBe('INVALID_ARGUMENT');
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
}

describe('parseDisplayName', () => {
  it('keeps a name trimmed, with any printable Unicode', () => {
    expect(parseDisplayName('  CI export  ', 'Token name')).toBe('CI export');
    expect(parseDisplayName('Équipe 東京 🚀', 'Token name')).toBe('Équipe 東京 🚀');
    expect(parseDisplayName('x'.repeat(100), 'Token name')).toHaveLength(100);
  });

  it.each([
    ['NUL', 'ci\u0000bot', /control characters/],
    ['a line break inside', 'ci\nbot', /control characters/],
    ['an escape', 'ci\u001b[31m', /control characters/],
    ['DEL', 'ci\u007f', /control characters/],
    ['a C1 control', 'ci\u0085', /control characters/],
    ['a line separator', 'ci\u2028bot', /control characters/],
    ['a lone high surrogate', 'ci\ud800bot', /lone surrogate/],
    ['a lone low surrogate', '\udc00', /lone surrogate/],
    ['an empty name', '', /1 to 100 characters/],
    ['only spaces', '   ', /1 to 100 characters/],
    ['101 characters', 'x'.repeat(101), /1 to 100 characters/],
  ])('refuses %s', (_what, value, message) => {
    expect(refusal(value)).toMatch(message);
  });

  it('refuses a value that is not text', () => {
    expect(refusal(42)).toBe('Token name is required');
    expect(refusal(undefined)).toBe('Token name is required');
  });
});
