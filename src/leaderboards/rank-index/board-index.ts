import type { RankedEntry } from '../read/board-reader';
import type { RankKey } from '../ranking/ranking';

/** Entries per order chunk before it splits in two; chunks are filled to LOAD_FILL on load. */
const CHUNK_MAX = 1024;
const LOAD_FILL = 768;
/** A chunk this small is merged into a neighbour. */
const CHUNK_MIN = CHUNK_MAX / 8;
/** Bytes of an EVM-style address (`0x` + 40 hex digits), kept packed. */
const ADDRESS_BYTES = 20;
/** Slot 0 never holds an entry: searches write the key they look for there. */
const PROBE = 0;
const EMPTY = 0;
const DELETED = -1;

/**
 * One board's entries in rank order, in typed arrays: slots hold points, reachedAt and the address
 * (packed to 20 bytes when `0x` + 40 lower-case hex digits, else in `otherAddresses`); a hash finds
 * an address's slot; the order is chunks of at most CHUNK_MAX slots under a Fenwick tree of their
 * lengths, so rank, select, insert and delete cost O(log n) plus a move within one chunk.
 * Not thread-safe, not persistent: the rank index service loads it and feeds it changes.
 */
export class BoardIndex {
  private capacity: number;
  private points: Float64Array;
  private reachedAt: Float64Array;
  private addressBytes: Uint8Array;
  /** addressBytes as a Buffer (the same memory), for hex encoding. */
  private addressHex: Buffer;
  /** addressBytes as 32-bit words (5 per slot), for hashing. */
  private addressWords: Uint32Array;
  private readonly otherAddresses = new Map<number, string>();
  private nextSlot = 1;
  private readonly freeSlots: number[] = [];

  private table: Int32Array;
  private tableUsed = 0;
  private tableDeleted = 0;

  private chunks: Int32Array[] = [];
  private lengths: number[] = [];
  private fenwick = new Int32Array(1);
  private count = 0;
  /** False while loading: entries are in slots but not yet in the order. */
  private ordered = true;
  private readonly probeBytes = new Uint8Array(ADDRESS_BYTES);
  private readonly probeWords = new Uint32Array(this.probeBytes.buffer);

  /** An empty index; {@link fromEntries} builds one from rows. */
  constructor(expectedEntries = 0) {
    this.capacity = Math.max(16, Math.ceil(expectedEntries * 1.125) + 1);
    this.points = new Float64Array(this.capacity);
    this.reachedAt = new Float64Array(this.capacity);
    this.addressBytes = new Uint8Array(this.capacity * ADDRESS_BYTES);
    this.addressWords = new Uint32Array(this.addressBytes.buffer);
    this.addressHex = Buffer.from(this.addressBytes.buffer);
    this.table = new Int32Array(tableSizeFor(expectedEntries));
  }

  /**
   * Builds an index from entries in any order (rank order is cheapest: it is checked, not
   * sorted). An address given twice keeps its last values; entries at 0 points or below are left
   * out, as on the board.
   */
  static fromEntries(entries: Iterable<RankKey>, expectedEntries = 0): BoardIndex {
    const index = new BoardIndex(expectedEntries);
    for (const entry of entries) index.load(entry.addressKey, entry.points, entry.reachedAt);
    index.finishLoad();
    return index;
  }

  /** Adds an entry while loading (see {@link fromEntries}); {@link finishLoad} orders them. */
  load(addressKey: string, points: number, reachedAt: number): void {
    if (this.ordered && this.nextSlot > 1) throw new Error('rank index: load() after use');
    this.ordered = false;
    this.place(addressKey, points, reachedAt);
  }

  /**
   * {@link load} of an address given packed: the 20 bytes at `at` of `bytes` (`0x` + 40 lower-case
   * hex digits, as the rank index keeps them).
   */
  loadPacked(bytes: Uint8Array, at: number, points: number, reachedAt: number): void {
    if (this.ordered && this.nextSlot > 1) throw new Error('rank index: load() after use');
    this.ordered = false;
    const probe = this.probeBytes;
    for (let i = 0; i < ADDRESS_BYTES; i++) probe[i] = bytes[at + i];
    const hash = hashWords(this.probeWords, 0);
    let slot = this.lookup('', true, hash);
    if (slot <= 0) {
      slot = this.allocateSlot();
      this.addressBytes.set(probe, slot * ADDRESS_BYTES);
      this.tableInsert(slot, hash);
    }
    this.points[slot] = points;
    this.reachedAt[slot] = reachedAt;
  }

  finishLoad(): void {
    if (this.ordered) return;
    this.buildOrder();
    this.ordered = true;
  }

  /** Entries on the board. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the typed arrays and the non-packed addresses (an estimate for those). */
  get bytes(): number {
    let bytes =
      this.points.byteLength +
      this.reachedAt.byteLength +
      this.addressBytes.byteLength +
      this.table.byteLength +
      this.fenwick.byteLength +
      this.freeSlots.length * 8;
    for (const chunk of this.chunks) bytes += chunk.byteLength + 16;
    for (const address of this.otherAddresses.values()) bytes += 48 + address.length * 2;
    return bytes;
  }

  /**
   * Sets an address's total and the time it reached it; at 0 points or below the address leaves
   * the board. Answers whether anything changed.
   */
  set(addressKey: string, points: number, reachedAt: number): boolean {
    if (!this.ordered) throw new Error('rank index: set() before finishLoad()');
    const slot = this.findSlot(addressKey);
    if (slot > 0) {
      if (this.points[slot] === points && this.reachedAt[slot] === reachedAt) return false;
      this.removeFromOrder(slot);
      if (points <= 0) {
        this.releaseSlot(slot);
        return true;
      }
      this.points[slot] = points;
      this.reachedAt[slot] = reachedAt;
      this.insertIntoOrder(slot);
      return true;
    }
    if (points <= 0) return false;
    this.insertIntoOrder(this.place(addressKey, points, reachedAt));
    return true;
  }

  /** The address's entry with its 1-based rank, or null when it is not on the board. */
  get(addressKey: string): RankedEntry | null {
    const slot = this.findSlot(addressKey);
    if (slot <= 0) return null;
    return {
      points: this.points[slot],
      reachedAt: this.reachedAt[slot],
      addressKey: this.addressOf(slot),
      rank: this.positionOf(slot) + 1,
    };
  }

  /** Entries strictly ahead of `key` in rank order (whether or not `key` is on the board). */
  countAhead(key: RankKey): number {
    this.writeProbe(key);
    return this.positionOf(PROBE);
  }

  /** Entries ahead of `key` plus `key` itself when exactly that entry is on the board. */
  countThrough(key: RankKey): number {
    const ahead = this.countAhead(key);
    if (ahead >= this.count) return ahead;
    return this.compare(this.slotAt(ahead), PROBE) === 0 ? ahead + 1 : ahead;
  }

  /** Up to `limit` entries from the 0-based position `start`, ranked. */
  slice(start: number, limit: number): RankedEntry[] {
    const entries: RankedEntry[] = [];
    if (start < 0 || start >= this.count || limit <= 0) return entries;
    let [chunk, offset] = this.locatePosition(start);
    let rank = start + 1;
    while (entries.length < limit && chunk < this.chunks.length) {
      const slots = this.chunks[chunk];
      const length = this.lengths[chunk];
      for (; offset < length && entries.length < limit; offset++) {
        const slot = slots[offset];
        entries.push({
          points: this.points[slot],
          reachedAt: this.reachedAt[slot],
          addressKey: this.addressOf(slot),
          rank: rank++,
        });
      }
      chunk++;
      offset = 0;
    }
    return entries;
  }

  // --- slots ---

  /** Puts an address in a slot (new, or its existing one) without touching the order. */
  private place(addressKey: string, points: number, reachedAt: number): number {
    const packed = packHex(addressKey, this.probeBytes, 0);
    const hash = packed ? hashWords(this.probeWords, 0) : hashText(addressKey);
    let slot = this.lookup(addressKey, packed, hash);
    if (slot <= 0) {
      slot = this.allocateSlot();
      if (packed) this.addressBytes.set(this.probeBytes, slot * ADDRESS_BYTES);
      else this.otherAddresses.set(slot, addressKey);
      this.tableInsert(slot, hash);
    }
    this.points[slot] = points;
    this.reachedAt[slot] = reachedAt;
    return slot;
  }

  private allocateSlot(): number {
    const reused = this.freeSlots.pop();
    if (reused !== undefined) return reused;
    if (this.nextSlot >= this.capacity) this.grow(Math.ceil(this.capacity * 1.5));
    return this.nextSlot++;
  }

  private releaseSlot(slot: number): void {
    this.tableRemove(slot);
    this.otherAddresses.delete(slot);
    this.freeSlots.push(slot);
  }

  private grow(capacity: number): void {
    const points = new Float64Array(capacity);
    points.set(this.points);
    const reachedAt = new Float64Array(capacity);
    reachedAt.set(this.reachedAt);
    const addressBytes = new Uint8Array(capacity * ADDRESS_BYTES);
    addressBytes.set(this.addressBytes);
    this.points = points;
    this.reachedAt = reachedAt;
    this.addressBytes = addressBytes;
    this.addressWords = new Uint32Array(addressBytes.buffer);
    this.addressHex = Buffer.from(addressBytes.buffer);
    this.capacity = capacity;
  }

  private writeAddress(slot: number, addressKey: string): void {
    const at = slot * ADDRESS_BYTES;
    if (packHex(addressKey, this.addressBytes, at)) this.otherAddresses.delete(slot);
    else this.otherAddresses.set(slot, addressKey);
  }

  private addressOf(slot: number): string {
    const other = this.otherAddresses.get(slot);
    if (other !== undefined) return other;
    const at = slot * ADDRESS_BYTES;
    // Native hex encoding: a flat string at once (a loop of += builds a rope of 20 pieces).
    return '0x' + this.addressHex.toString('hex', at, at + ADDRESS_BYTES);
  }

  private writeProbe(key: RankKey): void {
    this.points[PROBE] = key.points;
    this.reachedAt[PROBE] = key.reachedAt;
    this.writeAddress(PROBE, key.addressKey);
  }

  /** Rank order of two slots: negative when `a` comes first. */
  private compare(a: number, b: number): number {
    const pa = this.points[a];
    const pb = this.points[b];
    if (pa !== pb) return pa > pb ? -1 : 1;
    const ra = this.reachedAt[a];
    const rb = this.reachedAt[b];
    if (ra !== rb) return ra < rb ? -1 : 1;
    if (
      this.otherAddresses.size === 0 ||
      (!this.otherAddresses.has(a) && !this.otherAddresses.has(b))
    ) {
      // Packed hex compares byte by byte as its text does.
      const bytes = this.addressBytes;
      for (
        let i = a * ADDRESS_BYTES, j = b * ADDRESS_BYTES, end = i + ADDRESS_BYTES;
        i < end;
        i++, j++
      ) {
        if (bytes[i] !== bytes[j]) return bytes[i] < bytes[j] ? -1 : 1;
      }
      return 0;
    }
    const sa = this.addressOf(a);
    const sb = this.addressOf(b);
    return sa === sb ? 0 : sa < sb ? -1 : 1;
  }

  // --- address hash table (linear probing; slots stored as is, 0 empty, -1 deleted) ---

  private findSlot(addressKey: string): number {
    const packed = packHex(addressKey, this.probeBytes, 0);
    return this.lookup(
      addressKey,
      packed,
      packed ? hashWords(this.probeWords, 0) : hashText(addressKey),
    );
  }

  /** The slot of an address whose packed form (when `packed`) is in probeBytes. */
  private lookup(addressKey: string, packed: boolean, hash: number): number {
    const mask = this.table.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = this.table[i];
      if (slot === EMPTY) return -1;
      if (slot !== DELETED && this.holds(slot, addressKey, packed)) return slot;
    }
  }

  private hashOfSlot(slot: number): number {
    const other = this.otherAddresses.get(slot);
    return other === undefined ? hashWords(this.addressWords, slot * 5) : hashText(other);
  }

  private holds(slot: number, addressKey: string, packed: boolean): boolean {
    const other = this.otherAddresses.get(slot);
    if (other !== undefined) return other === addressKey;
    if (!packed) return false;
    const bytes = this.addressBytes;
    const probe = this.probeBytes;
    for (let i = 0, at = slot * ADDRESS_BYTES; i < ADDRESS_BYTES; i++, at++) {
      if (bytes[at] !== probe[i]) return false;
    }
    return true;
  }

  private tableInsert(slot: number, hash: number): void {
    if ((this.tableUsed + this.tableDeleted + 1) * 4 > this.table.length * 3) this.rehash();
    const mask = this.table.length - 1;
    let i = hash & mask;
    while (this.table[i] > 0) i = (i + 1) & mask;
    if (this.table[i] === DELETED) this.tableDeleted--;
    this.table[i] = slot;
    this.tableUsed++;
  }

  private tableRemove(target: number): void {
    const mask = this.table.length - 1;
    for (let i = this.hashOfSlot(target) & mask; ; i = (i + 1) & mask) {
      const slot = this.table[i];
      if (slot === EMPTY) return;
      if (slot === target) {
        this.table[i] = DELETED;
        this.tableUsed--;
        this.tableDeleted++;
        return;
      }
    }
  }

  private rehash(): void {
    const old = this.table;
    this.table = new Int32Array(tableSizeFor(this.tableUsed + 1));
    this.tableUsed = 0;
    this.tableDeleted = 0;
    for (const slot of old) if (slot > 0) this.tableInsert(slot, this.hashOfSlot(slot));
  }

  // --- rank order ---

  /** Sorts the placed slots into chunks (after fromEntries' placing). */
  private buildOrder(): void {
    const live = new Int32Array(this.nextSlot - 1 - this.freeSlots.length);
    let n = 0;
    const freed = new Set(this.freeSlots);
    for (let slot = 1; slot < this.nextSlot; slot++) {
      if (!freed.has(slot) && this.points[slot] > 0) live[n++] = slot;
      else if (!freed.has(slot)) {
        this.releaseSlot(slot);
      }
    }
    const slots = live.subarray(0, n);
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) sorted = this.compare(slots[i - 1], slots[i]) < 0;
    if (!sorted) slots.sort((a, b) => this.compare(a, b));
    this.chunks = [];
    this.lengths = [];
    for (let i = 0; i < n; i += LOAD_FILL) {
      const chunk = new Int32Array(CHUNK_MAX);
      const part = slots.subarray(i, Math.min(n, i + LOAD_FILL));
      chunk.set(part);
      this.chunks.push(chunk);
      this.lengths.push(part.length);
    }
    this.count = n;
    this.rebuildFenwick();
  }

  /** The chunk that holds (or would hold) `slot`: the first whose last entry is not before it. */
  private chunkFor(slot: number): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(this.chunks[mid][this.lengths[mid] - 1], slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position inside a chunk of the first entry not before `slot`. */
  private offsetIn(chunk: number, slot: number): number {
    const slots = this.chunks[chunk];
    let lo = 0;
    let hi = this.lengths[chunk];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(slots[mid], slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Entries before `slot` in rank order. */
  private positionOf(slot: number): number {
    if (this.chunks.length === 0) return 0;
    const chunk = this.chunkFor(slot);
    return this.prefix(chunk) + this.offsetIn(chunk, slot);
  }

  private slotAt(position: number): number {
    const [chunk, offset] = this.locatePosition(position);
    return this.chunks[chunk][offset];
  }

  private insertIntoOrder(slot: number): void {
    if (this.chunks.length === 0) {
      this.chunks.push(new Int32Array(CHUNK_MAX));
      this.lengths.push(0);
      this.rebuildFenwick();
    }
    const chunk = this.chunkFor(slot);
    const offset = this.offsetIn(chunk, slot);
    const slots = this.chunks[chunk];
    const length = this.lengths[chunk];
    slots.copyWithin(offset + 1, offset, length);
    slots[offset] = slot;
    this.lengths[chunk] = length + 1;
    this.count++;
    if (length + 1 === CHUNK_MAX) this.split(chunk);
    else this.fenwickAdd(chunk, 1);
  }

  private removeFromOrder(slot: number): void {
    const chunk = this.chunkFor(slot);
    const offset = this.offsetIn(chunk, slot);
    const slots = this.chunks[chunk];
    const length = this.lengths[chunk];
    if (offset >= length || slots[offset] !== slot) {
      throw new Error('rank index: an entry is missing from the order');
    }
    slots.copyWithin(offset, offset + 1, length);
    this.lengths[chunk] = length - 1;
    this.count--;
    if (length - 1 < CHUNK_MIN) this.mergeSmall(chunk);
    else this.fenwickAdd(chunk, -1);
  }

  private split(chunk: number): void {
    const slots = this.chunks[chunk];
    const half = CHUNK_MAX / 2;
    const upper = new Int32Array(CHUNK_MAX);
    upper.set(slots.subarray(half, CHUNK_MAX));
    this.chunks.splice(chunk + 1, 0, upper);
    this.lengths.splice(chunk + 1, 0, CHUNK_MAX - half);
    this.lengths[chunk] = half;
    this.rebuildFenwick();
  }

  /** Folds a small chunk into a neighbour when both fit in one, or drops it when empty. */
  private mergeSmall(chunk: number): void {
    const length = this.lengths[chunk];
    if (length === 0 && this.chunks.length > 1) {
      this.chunks.splice(chunk, 1);
      this.lengths.splice(chunk, 1);
      this.rebuildFenwick();
      return;
    }
    const next = chunk + 1;
    if (next < this.chunks.length && length + this.lengths[next] <= CHUNK_MAX / 2) {
      const into = this.chunks[chunk];
      into.set(this.chunks[next].subarray(0, this.lengths[next]), length);
      this.lengths[chunk] = length + this.lengths[next];
      this.chunks.splice(next, 1);
      this.lengths.splice(next, 1);
      this.rebuildFenwick();
      return;
    }
    this.fenwickAdd(chunk, -1);
  }

  // --- Fenwick tree over chunk lengths (1-based inside) ---

  private rebuildFenwick(): void {
    const n = this.chunks.length;
    const tree = new Int32Array(n + 1);
    for (let i = 1; i <= n; i++) {
      tree[i] += this.lengths[i - 1];
      const parent = i + (i & -i);
      if (parent <= n) tree[parent] += tree[i];
    }
    this.fenwick = tree;
  }

  private fenwickAdd(chunk: number, delta: number): void {
    for (let i = chunk + 1; i < this.fenwick.length; i += i & -i) this.fenwick[i] += delta;
  }

  /** Entries in the chunks before `chunk`. */
  private prefix(chunk: number): number {
    let sum = 0;
    for (let i = chunk; i > 0; i -= i & -i) sum += this.fenwick[i];
    return sum;
  }

  /** [chunk, offset] of a 0-based position (position < size). */
  private locatePosition(position: number): [number, number] {
    const tree = this.fenwick;
    let at = 0;
    let remaining = position;
    for (let step = highestPowerOfTwo(tree.length - 1); step > 0; step >>= 1) {
      const next = at + step;
      if (next < tree.length && tree[next] <= remaining) {
        at = next;
        remaining -= tree[next];
      }
    }
    return [at, remaining];
  }
}

/** A power of two that keeps the table at most 60% full; it is rehashed past 75%. */
function tableSizeFor(entries: number): number {
  let size = 16;
  while (size * 0.6 < entries) size *= 2;
  return size;
}

function highestPowerOfTwo(n: number): number {
  let power = 1;
  while (power * 2 <= n) power *= 2;
  return n === 0 ? 0 : power;
}

/** FNV-1a over UTF-16 code units (addresses that are not packed). */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return fmix(hash);
}

/** murmur3's finaliser: every input bit reaches the low bits the table uses. */
function fmix(hash: number): number {
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

function hashWords(words: Uint32Array, at: number): number {
  let hash = 0x811c9dc5;
  for (let i = at; i < at + 5; i++) hash = Math.imul(hash ^ words[i], 0x01000193);
  return fmix(hash);
}

/** Writes `0x` + 40 lower-case hex digits as 20 bytes at `at`; false for any other text. */
function packHex(text: string, into: Uint8Array, at: number): boolean {
  if (
    text.length !== 2 + ADDRESS_BYTES * 2 ||
    text.charCodeAt(0) !== 48 ||
    text.charCodeAt(1) !== 120
  )
    return false;
  for (let i = 0; i < ADDRESS_BYTES; i++) {
    const high = hexValue(text.charCodeAt(2 + i * 2));
    const low = hexValue(text.charCodeAt(3 + i * 2));
    if (high < 0 || low < 0) return false;
    into[at + i] = (high << 4) | low;
  }
  return true;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}
