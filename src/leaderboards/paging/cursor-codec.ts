import { createHmac, timingSafeEqual } from 'node:crypto';
import type { BoardRef, RankKey } from '../ranking/ranking';

const VERSION = 1;
const MAC_BYTES = 16;
const MAX_CURSOR_LENGTH = 512;

/**
 * Opaque, signed cursors bound to their board. A cursor carries the rank key of an entry (not its
 * rank, which moves as the board changes), so it stays meaningful across restarts and instances
 * that share the secret, and keyset paging resumes exactly after it.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {
    if (secret.length < 16) throw new Error('Cursor secret must be at least 16 bytes');
  }

  encode(board: BoardRef, key: RankKey): string {
    const body = Buffer.from(
      JSON.stringify([
        VERSION,
        board.spaceId,
        board.sprintId,
        key.points,
        key.reachedAt,
        key.addressKey,
      ]),
    ).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** The rank key inside `cursor`, or null when it is malformed, tampered or of another board. */
  decode(board: BoardRef, cursor: string): RankKey | null {
    if (cursor.length > MAX_CURSOR_LENGTH) return null;
    const dot = cursor.indexOf('.');
    if (dot <= 0 || dot !== cursor.lastIndexOf('.')) return null;
    const body = cursor.slice(0, dot);
    // Compare the MAC as text: base64url decoding ignores padding, junk and the spare low bits of
    // the last character, which would let altered cursors through.
    const mac = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(body).toString('base64url'));
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!Array.isArray(parsed) || parsed.length !== 6) return null;
    const [version, spaceId, sprintId, points, reachedAt, addressKey] = parsed as unknown[];
    if (
      version !== VERSION ||
      spaceId !== board.spaceId ||
      sprintId !== board.sprintId ||
      !Number.isSafeInteger(points) ||
      !Number.isSafeInteger(reachedAt) ||
      typeof addressKey !== 'string'
    ) {
      return null;
    }
    return { points: points as number, reachedAt: reachedAt as number, addressKey };
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, MAC_BYTES);
  }
}
