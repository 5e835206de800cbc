/** A key in a board's rank order, as its columns name it. */
export interface BoardKey {
  points: number;
  reachedAt: number;
  addressKey: string;
}

/** Entries of a board in rank order, packed: what a worker thread sends per message. */
export interface PackedEntries {
  count: number;
  /** 20 bytes per entry: the address when it is `0x` + 40 lower-case hex digits. */
  addresses: Uint8Array;
  points: Float64Array;
  reachedAt: Float64Array;
  /** [entry, addressKey] of the entries whose address is not packed. */
  others: Array<[number, string]>;
}

/** The statements of a board read (columns addressKey, points, reachedAt; rank order). */
export interface BoardStatements {
  /** Every entry. Params: `params`. */
  whole: string;
  /** The entries strictly before a split key, and from it on. Params: `splitParams(key)`. */
  before: string;
  from: string;
  /** One entry at an offset. Params: `offsetParams(offset)`. */
  at: string;
  params: readonly unknown[];
  splitParams(key: BoardKey): unknown[];
  offsetParams(offset: number): unknown[];
}

export interface BoardReadOptions {
  /** Entries the board had when counted: from PARALLEL_FROM, two workers read a half each. */
  expected: number;
  /** Aborted: the workers stop, and the read resolves without the rest. */
  signal: AbortSignal;
  /** Asked before each message is placed: false stops the read as an abort does. */
  stillWanted: () => boolean;
  /**
   * Runs before the first part starts: with two parts, once the second is reading (tests write
   * here, between the two reads).
   */
  beforeFirstPart?: () => void;
}

/**
 * Reads a whole board off the main thread (worker threads with connections of their own), handing
 * its entries over packed and in rank order. Rejects if a worker cannot run or fails.
 */
export type ParallelBoardRead = (
  statements: BoardStatements,
  sink: (entries: PackedEntries) => void,
  options: BoardReadOptions,
) => Promise<void>;
