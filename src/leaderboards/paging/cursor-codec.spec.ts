import { createHmac } from 'node:crypto';
import { CursorCodec } from './cursor-codec';
import type { BoardRef, RankKey } from '../ranking/ranking';
import { seededRandom } from '../../common/seeded-random';

const SECRET = Buffer.from('0123456789abcdef0123456789abcdef');
const OTHER_SECRET = Buffer.from('fedcba9876543210fedcba9876543210');
const BOARD: BoardRef = { spaceId: 7, sprintId: 3 };
const KEY: RankKey = { points: 1234, reachedAt: 1_767_225_600_000, addressKey: '0xabc123' };

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Signs an arbitrary JSON body exactly as the codec does, to craft well-signed but wrong cursors. */
function signBody(json: string, secret: Buffer = SECRET): string {
  const body = Buffer.from(json).toString('base64url');
  const mac = createHmac('sha256', secret)
    .update(body)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
  return `${body}.${mac}`;
}

function otherChar(c: string): string {
  return c === 'A' ? 'B' : 'A';
}

function replaceAt(s: string, i: number, c: string): string {
  return s.slice(0, i) + c + s.slice(i + 1);
}

describe('CursorCodec', () => {
  const codec = new CursorCodec(SECRET);

  describe('constructor', () => {
    it('refuses a secret shorter than 16 bytes', () => {
      expect(() => new CursorCodec(Buffer.alloc(15, 1))).toThrow('at least 16 bytes');
      expect(() => new CursorCodec(Buffer.alloc(0))).toThrow();
    });

    it('accepts a secret of exactly 16 bytes', () => {
      const c = new CursorCodec(Buffer.alloc(16, 1));
      expect(c.decode(BOARD, c.encode(BOARD, KEY))).toEqual(KEY);
    });
  });

  describe('round trip', () => {
    it('decodes what it encoded', () => {
      const cursor = codec.encode(BOARD, KEY);
      expect(typeof cursor).toBe('string');
      expect(codec.decode(BOARD, cursor)).toEqual(KEY);
    });

    it('produces an opaque cursor of one body and one MAC, base64url only', () => {
      const cursor = codec.encode(BOARD, KEY);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      expect(cursor).not.toContain(KEY.addressKey);
    });

    it('is deterministic and the same for another codec sharing the secret', () => {
      const again = new CursorCodec(Buffer.from(SECRET));
      expect(codec.encode(BOARD, KEY)).toBe(again.encode(BOARD, KEY));
      expect(again.decode(BOARD, codec.encode(BOARD, KEY))).toEqual(KEY);
    });

    it('round-trips the all-time board (sprintId 0), zero and negative points, reachedAt 0', () => {
      const board = { spaceId: 1, sprintId: 0 };
      for (const key of [
        { points: 0, reachedAt: 0, addressKey: 'a' },
        { points: -5, reachedAt: 1, addressKey: 'b' },
        { points: Number.MAX_SAFE_INTEGER, reachedAt: Number.MAX_SAFE_INTEGER, addressKey: '' },
      ]) {
        expect(codec.decode(board, codec.encode(board, key))).toEqual(key);
      }
    });

    it.each([
      ['unicode', 'ünïcødé-地址-😀'],
      ['double quotes', 'a"b""c'],
      ['single quotes and backslashes', "o'neil\\x\\\\"],
      ['dots', 'a.b.c...'],
      ['JSON-looking text', '],[1,2,"x"'],
      ['whitespace and newlines', ' a\nb\t'],
    ])('round-trips an address key with %s', (_label, addressKey) => {
      const key = { ...KEY, addressKey };
      const cursor = codec.encode(BOARD, key);
      expect(cursor.split('.')).toHaveLength(2);
      expect(codec.decode(BOARD, cursor)).toEqual(key);
    });

    it('round-trips random keys (seeded)', () => {
      const rand = seededRandom(42);
      for (let i = 0; i < 300; i++) {
        const len = Math.floor(rand() * 20);
        let addressKey = '';
        for (let j = 0; j < len; j++)
          addressKey += String.fromCharCode(32 + Math.floor(rand() * 0x2000));
        const key = {
          points: Math.floor((rand() - 0.5) * 2e12),
          reachedAt: Math.floor(rand() * 4e12),
          addressKey,
        };
        const board = { spaceId: 1 + Math.floor(rand() * 1000), sprintId: Math.floor(rand() * 10) };
        expect(codec.decode(board, codec.encode(board, key))).toEqual(key);
      }
    });
  });

  describe('rejection (decode returns null)', () => {
    const cursor = codec.encode(BOARD, KEY);
    const dot = cursor.indexOf('.');

    it('rejects a body with one character changed, at every position', () => {
      for (let i = 0; i < dot; i++) {
        const tampered = replaceAt(cursor, i, otherChar(cursor[i]));
        expect(codec.decode(BOARD, tampered)).toBeNull();
      }
    });

    it('rejects a MAC with its first character changed', () => {
      expect(
        codec.decode(BOARD, replaceAt(cursor, dot + 1, otherChar(cursor[dot + 1]))),
      ).toBeNull();
    });

    it('rejects a MAC with any one character replaced by any other base64url character', () => {
      const accepted: string[] = [];
      for (let i = dot + 1; i < cursor.length; i++) {
        for (const c of BASE64URL) {
          if (c === cursor[i]) continue;
          const tampered = replaceAt(cursor, i, c);
          if (codec.decode(BOARD, tampered) !== null) accepted.push(tampered);
        }
      }
      expect(accepted).toEqual([]);
    });

    it('rejects a MAC with padding or junk appended', () => {
      expect(codec.decode(BOARD, `${cursor}==`)).toBeNull();
      expect(codec.decode(BOARD, `${cursor}!`)).toBeNull();
    });

    it('rejects a body swapped with the body of another cursor', () => {
      const other = codec.encode(BOARD, { ...KEY, points: KEY.points + 1 });
      const mixed = `${other.slice(0, other.indexOf('.'))}${cursor.slice(dot)}`;
      expect(codec.decode(BOARD, mixed)).toBeNull();
    });

    it('rejects truncated cursors', () => {
      for (let len = 0; len < cursor.length; len++) {
        expect(codec.decode(BOARD, cursor.slice(0, len))).toBeNull();
      }
      expect(codec.decode(BOARD, cursor.slice(1))).toBeNull();
    });

    it('rejects a cursor with an extra dot', () => {
      expect(codec.decode(BOARD, `${cursor}.`)).toBeNull();
      expect(codec.decode(BOARD, `${cursor}.${cursor.slice(dot + 1)}`)).toBeNull();
      expect(codec.decode(BOARD, `.${cursor}`)).toBeNull();
      expect(codec.decode(BOARD, replaceAt(cursor, 2, '.'))).toBeNull();
    });

    it('rejects the empty string and a lone dot', () => {
      expect(codec.decode(BOARD, '')).toBeNull();
      expect(codec.decode(BOARD, '.')).toBeNull();
      expect(codec.decode(BOARD, `.${cursor.slice(dot + 1)}`)).toBeNull();
      expect(codec.decode(BOARD, `${cursor.slice(0, dot)}.`)).toBeNull();
    });

    it('rejects a cursor signed with another secret', () => {
      const foreign = new CursorCodec(OTHER_SECRET).encode(BOARD, KEY);
      expect(codec.decode(BOARD, foreign)).toBeNull();
      expect(
        codec.decode(BOARD, signBody(JSON.stringify([1, 7, 3, 1, 1, 'a']), OTHER_SECRET)),
      ).toBeNull();
    });

    it('rejects a cursor of another board', () => {
      expect(codec.decode({ spaceId: 8, sprintId: 3 }, cursor)).toBeNull();
      expect(codec.decode({ spaceId: 7, sprintId: 4 }, cursor)).toBeNull();
      expect(codec.decode({ spaceId: 7, sprintId: 0 }, cursor)).toBeNull();
      expect(codec.decode({ spaceId: 3, sprintId: 7 }, cursor)).toBeNull();
    });

    it.each([
      ['plain words', 'hello world'],
      ['symbols', '!!!.???'],
      ['a number', '12345'],
      ['a legacy offset', '-1'],
      ['base64 junk with a dot', 'AAAA.BBBB'],
      ['a JWT-like string', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc'],
      ['unicode', 'ü.ö'],
    ])('rejects non-cursor junk: %s', (_label, junk) => {
      expect(codec.decode(BOARD, junk)).toBeNull();
    });

    it('rejects a correctly signed cursor longer than 512 characters, accepts one within', () => {
      const long = { ...KEY, addressKey: 'x'.repeat(400) };
      const tooLong = codec.encode(BOARD, long);
      expect(tooLong.length).toBeGreaterThan(512);
      expect(codec.decode(BOARD, tooLong)).toBeNull();

      // Grow the address until the cursor is as long as allowed: that one is accepted.
      let n = 0;
      let fits = codec.encode(BOARD, { ...KEY, addressKey: '' });
      while (codec.encode(BOARD, { ...KEY, addressKey: 'x'.repeat(n + 1) }).length <= 512) {
        n++;
        fits = codec.encode(BOARD, { ...KEY, addressKey: 'x'.repeat(n) });
      }
      expect(fits.length).toBeLessThanOrEqual(512);
      expect(codec.decode(BOARD, fits)).toEqual({ ...KEY, addressKey: 'x'.repeat(n) });
    });

    it('accepts a hand-signed body of the right shape (sanity check for the crafted cases)', () => {
      expect(codec.decode(BOARD, signBody(JSON.stringify([1, 7, 3, 10, 20, 'addr'])))).toEqual({
        points: 10,
        reachedAt: 20,
        addressKey: 'addr',
      });
    });

    it.each([
      ['version 2', [2, 7, 3, 10, 20, 'a']],
      ['version 0', [0, 7, 3, 10, 20, 'a']],
      ['version as a string', ['1', 7, 3, 10, 20, 'a']],
      ['spaceId as a string', [1, '7', 3, 10, 20, 'a']],
      ['sprintId as a string', [1, 7, '3', 10, 20, 'a']],
      ['sprintId null', [1, 7, null, 10, 20, 'a']],
      ['non-integer points', [1, 7, 3, 10.5, 20, 'a']],
      ['points as a string', [1, 7, 3, '10', 20, 'a']],
      ['points beyond safe integers', [1, 7, 3, 2 ** 53, 20, 'a']],
      ['points null', [1, 7, 3, null, 20, 'a']],
      ['non-integer reachedAt', [1, 7, 3, 10, 20.25, 'a']],
      ['reachedAt as an ISO string', [1, 7, 3, 10, '2026-01-01T00:00:00Z', 'a']],
      ['addressKey as a number', [1, 7, 3, 10, 20, 42]],
      ['addressKey null', [1, 7, 3, 10, 20, null]],
      ['a missing field', [1, 7, 3, 10, 20]],
      ['an extra field', [1, 7, 3, 10, 20, 'a', 'b']],
      ['an empty array', []],
    ])('rejects a correctly signed body with %s', (_label, body) => {
      expect(codec.decode(BOARD, signBody(JSON.stringify(body)))).toBeNull();
    });

    it.each([
      [
        'an object',
        JSON.stringify({ v: 1, spaceId: 7, sprintId: 3, points: 1, reachedAt: 1, addressKey: 'a' }),
      ],
      ['a string', JSON.stringify('hello')],
      ['a number', '1'],
      ['null', 'null'],
      ['invalid JSON', '[1,7,3,10,20,"a"'],
      ['not JSON at all', 'garbage'],
    ])('rejects a correctly signed body that is %s', (_label, json) => {
      expect(codec.decode(BOARD, signBody(json))).toBeNull();
    });
  });
});
