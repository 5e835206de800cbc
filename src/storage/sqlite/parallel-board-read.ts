import { Worker } from 'node:worker_threads';
import type {
  BoardKey,
  BoardReadOptions,
  BoardStatements,
  PackedEntries,
} from '../engine/parallel-board-read';

/** Entries per message: the main thread places one message's entries per turn of its loop. */
const ENTRIES_PER_MESSAGE = 32_768;
/** Boards from this size are read by two workers at once, split at the entry in the middle. */
export const PARALLEL_FROM = 200_000;

// The worker, as source: it runs from dist/ and from ts-jest alike (no file of its own to find).
// It opens the SQLite file read-only (only in WAL mode: a long read beside writers needs it),
// optionally answers the split key at an offset first, then runs one statement with each row as
// one text (the columns joined in SQL: a row array per row costs the driver several times SQLite's
// own work), and sends the entries packed, their buffers moved. Failures are sent as text: a
// driver's error class does not survive the trip between threads.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
try {
  const Database = require(workerData.driver);
  // On Linux a thread has its own nice value: below the main thread, which answers requests.
  if (process.platform === 'linux') {
    try {
      require('node:os').setPriority(10);
    } catch {}
  }
  const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') {
    throw new Error('the database is not in WAL mode');
  }
  const finish = (params) => {
    read(db, workerData.sql, params);
    db.close();
    parentPort.postMessage('done');
  };
  if (!workerData.split) finish(workerData.params);
  else {
    // The key at the offset, then (its parameters back from the main thread) what follows it.
    const key = db.prepare(workerData.split.sql).get(...workerData.split.params);
    parentPort.postMessage({ split: key ?? null });
    if (!key) {
      // Nothing at the offset (the board shrank): the first part, before no key, reads it all.
      db.close();
      parentPort.postMessage('done');
    } else {
      parentPort.once('message', (params) => {
        try {
          finish(params);
        } catch (error) {
          fail(error);
        }
      });
    }
  }
} catch (error) {
  fail(error);
}

function fail(error) {
  parentPort.postMessage({ failed: String((error && error.message) || error) });
}

function read(db, sql, params) {
  const HEX = new Int8Array(128).fill(-1);
  for (let i = 0; i < 10; i++) HEX[48 + i] = i;
  for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;
  let start = 0;
  // The number whose last character is at end (back to a U+001F); sets start to its first.
  const numberEndingAt = (text, end) => {
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
  };
  let batch;
  const fresh = () => (batch = {
    count: 0,
    addresses: new Uint8Array(workerData.perMessage * 20),
    points: new Float64Array(workerData.perMessage),
    reachedAt: new Float64Array(workerData.perMessage),
    others: [],
  });
  const send = () =>
    parentPort.postMessage(batch, [batch.addresses.buffer, batch.points.buffer, batch.reachedAt.buffer]);
  fresh();
  const joined = 'SELECT addressKey || char(31) || points || char(31) || reachedAt FROM (' + sql + ')';
  for (const text of db.prepare(joined).pluck(true).iterate(...params)) {
    // From the end: reachedAt, then points, then the address, which may hold anything.
    const reachedAt = numberEndingAt(text, text.length - 1);
    const points = numberEndingAt(text, start - 2);
    const end = start - 1;
    const n = batch.count++;
    batch.points[n] = points;
    batch.reachedAt[n] = reachedAt;
    let packed = end === 42 && text.charCodeAt(0) === 48 && text.charCodeAt(1) === 120;
    for (let k = 0, at = n * 20; packed && k < 20; k++, at++) {
      const high = HEX[text.charCodeAt(2 + k * 2)] ?? -1;
      const low = HEX[text.charCodeAt(3 + k * 2)] ?? -1;
      if (high < 0 || low < 0) packed = false;
      else batch.addresses[at] = (high << 4) | low;
    }
    if (!packed) batch.others.push([n, text.slice(0, end)]);
    if (batch.count === workerData.perMessage) {
      send();
      fresh();
    }
  }
  send();
}
`;

type WorkerMessage = PackedEntries | 'done' | { failed: string } | { split: BoardKey | null };

/**
 * Reads every entry of a board from the SQLite file in worker threads, handing the entries to
 * `sink` packed and in rank order, one message per turn of this thread's event loop: the read and
 * the decoding of rows run beside requests instead of between them. A board of PARALLEL_FROM
 * entries or more is read in two parts at once, split at the key of its middle entry: an entry
 * that does not change is in exactly one part, whatever is written between the parts' reads; one
 * that changes meanwhile may be missed or seen twice, which the changes queued during a load
 * repair (as between the chunks of a read on the main connection). Rejects if a worker cannot run
 * or fails (the database not in WAL mode included): the caller reads on its own connection.
 */
export function readSqliteBoardInWorkers(
  file: string,
  statements: BoardStatements,
  sink: (entries: PackedEntries) => void,
  options: BoardReadOptions,
): Promise<void> {
  const parallel = options.expected >= PARALLEL_FROM;
  const parts = parallel ? 2 : 1;
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    /** Messages of each part (0: before the split key, 1: from it on), held until their turn. */
    const held: PackedEntries[][] = Array.from({ length: parts }, () => []);
    const done = new Array<boolean>(parts).fill(false);
    let current = 0;
    let settled = false;
    let scheduled = false;
    /** The first part, to start once the second is reading. */
    let firstPart: { sql: string; params: unknown[] } | undefined;

    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      for (const worker of workers) void worker.terminate();
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => finish();
    if (options.signal.aborted) return resolve();
    options.signal.addEventListener('abort', onAbort);

    /** Places the next held message of the part in turn, moving on past each finished part. */
    const drain = () => {
      scheduled = false;
      while (!settled && current < parts) {
        const next = held[current].shift();
        if (next) {
          if (!options.stillWanted()) return finish();
          sink(next);
          if (held[current].length > 0 || done[current]) {
            scheduled = true;
            setImmediate(() => guarded(drain));
          }
          return;
        }
        if (!done[current]) return;
        current++;
      }
      if (current === parts) finish();
    };
    const guarded = (run: () => void) => {
      if (settled) return;
      try {
        run();
      } catch (error) {
        finish(error as Error);
      }
    };

    const start = (part: number, data: Record<string, unknown>) => {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          driver: require.resolve('better-sqlite3'),
          file,
          perMessage: ENTRIES_PER_MESSAGE,
          ...data,
        },
      });
      workers.push(worker);
      worker.on('message', (message: WorkerMessage) =>
        guarded(() => {
          if (typeof message === 'object' && 'failed' in message) {
            finish(new Error(message.failed));
          } else if (typeof message === 'object' && 'split' in message) {
            // The second part knows its key: it reads from it on, and once it is reading (its
            // first message), the first part reads what comes before it.
            if (message.split === null) {
              options.beforeFirstPart?.();
              start(0, { sql: statements.whole, params: statements.params });
            } else {
              firstPart = { sql: statements.before, params: statements.splitParams(message.split) };
              worker.postMessage(firstPart.params);
            }
          } else {
            if (firstPart && part === 1) {
              options.beforeFirstPart?.();
              start(0, firstPart);
              firstPart = undefined;
            }
            if (message === 'done') done[part] = true;
            else held[part].push(message);
            // Placed on a later turn: a port hands over every message it holds in one go.
            if (!scheduled) {
              scheduled = true;
              setImmediate(() => guarded(drain));
            }
          }
        }),
      );
      worker.on('error', (error) => finish(error));
      worker.on('exit', (code) => {
        if (!done[part]) finish(new Error(`the board's reader stopped (${code}) before the end`));
      });
    };

    guarded(() => {
      if (!parallel) {
        options.beforeFirstPart?.();
        start(0, { sql: statements.whole, params: statements.params });
        return;
      }
      // The split key is read by the second part's worker, off this thread (an offset into a large
      // board is a walk of the index); the first part starts when it is known.
      start(1, {
        sql: statements.from,
        params: [],
        split: {
          sql: statements.at,
          params: statements.offsetParams(Math.floor(options.expected / 2)),
        },
      });
    });
  });
}
