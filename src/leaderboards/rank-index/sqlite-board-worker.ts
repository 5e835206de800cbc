import { Worker } from 'node:worker_threads';

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

/** Entries per message: the main thread places one message's entries between two requests. */
const ENTRIES_PER_MESSAGE = 32_768;
/** Boards from this size are read by two workers at once, each half of the board. */
const PARALLEL_FROM = 200_000;

// The worker, as source: it runs from dist/ and from ts-jest alike (no file of its own to find).
// It opens the SQLite file read-only (WAL: a consistent read beside the writers), reads the one
// statement with each row as one text (the columns joined in SQL: a row array per row costs the
// driver several times SQLite's own work), and sends the entries packed, their buffers moved.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
try {
const Database = require(workerData.driver);
// Below the main thread, which answers requests meanwhile (on Linux a thread has its own nice
// value; elsewhere this may apply to nothing, or fail, which changes nothing else).
try {
  require('node:os').setPriority(10);
} catch {}
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;
// The number whose last character is at \`end\` (back to a U+001F); sets \`start\` to its first.
let start = 0;
function numberEndingAt(text, end) {
  let i = end;
  let value = 0;
  let scale = 1;
  let code;
  while ((code = text.charCodeAt(i)) !== 31) {
    if (code < 48 || code > 57) {
      // Not a plain whole number (a sign, a fraction): the slow way.
      while (text.charCodeAt(i) !== 31) i--;
      start = i + 1;
      return Number(text.slice(start, end + 1));
    }
    value += (code - 48) * scale;
    scale *= 10;
    i--;
  }
  start = i + 1;
  return value;
}
let batch;
const fresh = () => (batch = {
  count: 0,
  addresses: new Uint8Array(workerData.perMessage * 20),
  points: new Float64Array(workerData.perMessage),
  reachedAt: new Float64Array(workerData.perMessage),
  others: [],
});
const send = () => parentPort.postMessage(batch, [batch.addresses.buffer, batch.points.buffer, batch.reachedAt.buffer]);
fresh();
const statement = db.prepare(workerData.sql).pluck(true);
for (const text of statement.iterate(...workerData.params, workerData.limit, workerData.offset)) {
  // From the end: reachedAt, then points, then the address, which may hold anything.
  const reachedAt = numberEndingAt(text, text.length - 1);
  const points = numberEndingAt(text, start - 2);
  const i = start - 1;
  const n = batch.count++;
  batch.points[n] = points;
  batch.reachedAt[n] = reachedAt;
  let packed = i === 42 && text.charCodeAt(0) === 48 && text.charCodeAt(1) === 120;
  for (let k = 0, at = n * 20; packed && k < 20; k++, at++) {
    const high = HEX[text.charCodeAt(2 + k * 2)] ?? -1;
    const low = HEX[text.charCodeAt(3 + k * 2)] ?? -1;
    if (high < 0 || low < 0) packed = false;
    else batch.addresses[at] = (high << 4) | low;
  }
  if (!packed) batch.others.push([n, text.slice(0, i)]);
  if (batch.count === workerData.perMessage) {
    send();
    fresh();
  }
}
send();
db.close();
parentPort.postMessage('done');
} catch (error) {
  // Sent as text: a driver's error class does not survive the trip between threads.
  parentPort.postMessage({ failed: String((error && error.message) || error) });
}
`;

/**
 * Reads every row of `sql` (columns addressKey, points, reachedAt, in rank order; whole numbers)
 * from the SQLite file in worker threads, handing the entries to `sink` packed and in order, one
 * message at a time, on this thread: the read and the decoding of rows run beside requests
 * instead of between them. Boards of PARALLEL_FROM entries or more (`expected`) are read in two
 * halves at once, the second waiting here until the first is placed. Each part is its own read:
 * like the chunks of a read on the main connection, a write between them may be missed or seen
 * twice, which the changes queued during a load repair. Stops (and resolves) when `stillWanted`
 * answers false. Rejects if a worker cannot run or fails.
 */
export function readBoardInWorker(
  file: string,
  sql: string,
  params: readonly unknown[],
  expected: number,
  sink: (entries: PackedEntries) => void,
  stillWanted: () => boolean,
): Promise<void> {
  const parts = expected >= PARALLEL_FROM ? 2 : 1;
  const size = Math.ceil(expected / parts);
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    /** Messages of the parts after the one being placed, held until their turn. */
    const held: PackedEntries[][] = Array.from({ length: parts }, () => []);
    const done = new Array<boolean>(parts).fill(false);
    let current = 0;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      for (const worker of workers) void worker.terminate();
      if (error) reject(error);
      else resolve();
    };
    const place = (entries: PackedEntries) => {
      if (!stillWanted()) return finish();
      sink(entries);
    };
    /**
     * Places the next message of the part in turn, moving on past each finished part: one message
     * per turn of the event loop, so that requests run between them.
     */
    let scheduled = false;
    const drain = () => {
      scheduled = false;
      while (!settled && current < parts) {
        const next = held[current].shift();
        if (next) {
          place(next);
          if (!settled && (held[current].length > 0 || done[current])) {
            scheduled = true;
            setImmediate(() => {
              try {
                drain();
              } catch (error) {
                finish(error as Error);
              }
            });
          }
          return;
        }
        if (!done[current]) return;
        current++;
      }
      if (current === parts) finish();
    };
    for (let part = 0; part < parts; part++) {
      const last = part === parts - 1;
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          driver: require.resolve('better-sqlite3'),
          file,
          sql: `SELECT addressKey || char(31) || points || char(31) || reachedAt FROM (${sql}) LIMIT ? OFFSET ?`,
          params,
          // The last part reads to the end, whatever was added since `expected` was counted.
          limit: last ? -1 : size,
          offset: part * size,
          perMessage: ENTRIES_PER_MESSAGE,
        },
      });
      workers.push(worker);
      worker.on('message', (message: PackedEntries | 'done' | { failed: string }) => {
        if (settled) return;
        try {
          if ('failed' in Object(message)) {
            return finish(new Error((message as { failed: string }).failed));
          }
          if (message === 'done') done[part] = true;
          else held[part].push(message as PackedEntries);
          if (!scheduled) drain();
        } catch (error) {
          finish(error as Error);
        }
      });
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => {
        if (!done[part]) finish(new Error(`the board's reader exited (${code}) before the end`));
      });
    }
  });
}
