import { createHash } from 'node:crypto';
import {
  DISPLAY_PREFIX_LENGTH,
  TOKEN_PREFIX,
  displayPrefixOf,
  generateToken,
  hashToken,
  isWellFormedToken,
} from './token-format';
import { seededRandom } from '../common/seeded-random';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^lpt_[0-9A-Za-z]{49}$/;

function replaceAt(s: string, i: number, c: string): string {
  return s.slice(0, i) + c + s.slice(i + 1);
}

describe('token format', () => {
  describe('generateToken', () => {
    it('generates tokens of the documented shape that are well formed', () => {
      for (let i = 0; i < 200; i++) {
        const token = generateToken();
        expect(token).toMatch(SHAPE);
        expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
        expect(token).toHaveLength(53);
        expect(isWellFormedToken(token)).toBe(true);
      }
    });

    it('generates 1000 distinct tokens', () => {
      const tokens = new Set<string>();
      for (let i = 0; i < 1000; i++) tokens.add(generateToken());
      expect(tokens.size).toBe(1000);
    });

    it('spreads the random part over the base62 alphabet', () => {
      const seen = new Set<string>();
      for (let i = 0; i < 200; i++) for (const c of generateToken().slice(4, 47)) seen.add(c);
      // 8600 random characters cover all 62 symbols with overwhelming probability.
      expect(seen.size).toBe(62);
    });
  });

  describe('isWellFormedToken', () => {
    const token = generateToken();

    it('rejects every single-character change, at every position, with every other base62 character', () => {
      const accepted: string[] = [];
      for (let i = 0; i < token.length; i++) {
        for (const c of BASE62) {
          if (c === token[i]) continue;
          const changed = replaceAt(token, i, c);
          if (isWellFormedToken(changed)) accepted.push(`${i}:${c}`);
        }
      }
      expect(accepted).toEqual([]);
    });

    it('rejects a change in the checksum part alone', () => {
      const body = token.slice(0, 47);
      const checksum = token.slice(47);
      for (let i = 0; i < 6; i++) {
        const c = checksum[i] === '0' ? '1' : '0';
        expect(isWellFormedToken(body + replaceAt(checksum, i, c))).toBe(false);
      }
    });

    it('rejects single-character changes in many random tokens (seeded positions)', () => {
      const rand = seededRandom(7);
      for (let n = 0; n < 300; n++) {
        const t = generateToken();
        const i = 4 + Math.floor(rand() * 49);
        let c = BASE62[Math.floor(rand() * 62)];
        if (c === t[i]) c = BASE62[(BASE62.indexOf(c) + 1) % 62];
        expect(isWellFormedToken(replaceAt(t, i, c))).toBe(false);
      }
    });

    it('rejects two adjacent characters swapped, when they differ', () => {
      for (let i = 4; i < token.length - 1; i++) {
        if (token[i] === token[i + 1]) continue;
        const swapped = token.slice(0, i) + token[i + 1] + token[i] + token.slice(i + 2);
        expect(isWellFormedToken(swapped)).toBe(false);
      }
    });

    it.each([
      ['an uppercase prefix', (t: string) => 'LPT_' + t.slice(4)],
      ['a capitalised prefix', (t: string) => 'Lpt_' + t.slice(4)],
      ['another prefix', (t: string) => 'ghp_' + t.slice(4)],
      ['a dash instead of the underscore', (t: string) => 'lpt-' + t.slice(4)],
      ['no prefix', (t: string) => t.slice(4)],
      ['the last character removed', (t: string) => t.slice(0, -1)],
      ['the first random character removed', (t: string) => t.slice(0, 4) + t.slice(5)],
      ['an extra character at the end', (t: string) => t + 'a'],
      ['an extra character inside', (t: string) => t.slice(0, 10) + 'a' + t.slice(10)],
      ['surrounding whitespace', (t: string) => ` ${t} `],
      ['a trailing newline', (t: string) => `${t}\n`],
      ['a non-base62 character', (t: string) => replaceAt(t, 10, '-')],
    ])('rejects a token with %s', (_label, mutate) => {
      expect(isWellFormedToken(mutate(token))).toBe(false);
    });

    it('rejects empty and unrelated strings', () => {
      expect(isWellFormedToken('')).toBe(false);
      expect(isWellFormedToken('lpt_')).toBe(false);
      expect(isWellFormedToken('lpt_' + '0'.repeat(49))).toBe(false);
      expect(isWellFormedToken('Bearer ' + token)).toBe(false);
    });
  });

  describe('hashToken', () => {
    it('is 64 lowercase hex characters, the SHA-256 of the token', () => {
      const token = generateToken();
      const hash = hashToken(token);
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).toBe(createHash('sha256').update(token, 'utf8').digest('hex'));
    });

    it('is deterministic', () => {
      const token = generateToken();
      expect(hashToken(token)).toBe(hashToken(token));
    });

    it('differs per token, and does not contain the token', () => {
      const hashes = new Set<string>();
      for (let i = 0; i < 200; i++) {
        const token = generateToken();
        const hash = hashToken(token);
        expect(hash).not.toContain(token.slice(4));
        hashes.add(hash);
      }
      expect(hashes.size).toBe(200);
      const t = generateToken();
      expect(hashToken(t)).not.toBe(hashToken(replaceAt(t, 20, t[20] === 'a' ? 'b' : 'a')));
    });
  });

  describe('displayPrefixOf', () => {
    it('returns the first 12 characters: the prefix and 8 more', () => {
      expect(DISPLAY_PREFIX_LENGTH).toBe(12);
      const token = generateToken();
      expect(displayPrefixOf(token)).toBe(token.slice(0, 12));
      expect(displayPrefixOf(token)).toHaveLength(12);
      expect(displayPrefixOf(token).startsWith('lpt_')).toBe(true);
    });

    it('keeps a short input as it is', () => {
      expect(displayPrefixOf('lpt_abc')).toBe('lpt_abc');
    });
  });
});
