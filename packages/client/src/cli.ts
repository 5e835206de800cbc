#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import {
  createClient,
  endpointUrl,
  type BoardExport,
  type Entry,
  type LoyaltyClient,
} from './client.js';
import { LoyaltyApiError } from './errors.js';
import { BOARD_CSV_HEADER, boardCsvLine, type BoardCsvRow } from './csv.js';

const HELP = `Usage: loyalty-client <command> [options]

Speaks to the GraphQL endpoint given by --endpoint URL or LOYALTY_ENDPOINT, its full URL with
the path (e.g. http://localhost:3000/query), with the access token from LOYALTY_TOKEN. There is
no default endpoint: the token goes only where it was told to. The token is never taken from the
command line, where other users of the machine could read it. LOYALTY_URL (the service's base
URL, /query appended) still works, with a warning: it is deprecated for LOYALTY_ENDPOINT.

Commands:
  top --space ID [--sprint ID] [--limit N]
        the first N entries of a board (default 10, at most 1000)
  find-rank --space ID --address A [--sprint ID] [--max-pages N] [--walk]
        one address's rank and points. Uses the server's direct lookup when it has one;
        otherwise (or with --walk) pages through the board, giving up after --max-pages
        (default 100). Exit code 3 when the address is not found.
  export --space ID [--sprint ID] [--format csv|ndjson] [--out FILE] [--walk]
         [--resume-from CURSOR]
        a whole board in rank order (rank, address, username, points), from one consistent
        snapshot of the server's export endpoint. --out FILE appears only once the export is
        complete; a failed one leaves no FILE behind (and an older FILE as it was). A server
        without the endpoint is walked page by page instead, with a warning: if the board
        changes during a walk, entries can be missed and ranks repeat or skip.
        --walk walks even so. A walk prints the cursor to resume from when interrupted (Ctrl-C,
        an error): run again with --resume-from CURSOR (a walk too) and the same --out to append
        exactly the rest. A resume cursor that is no longer valid is an error, never a restart.

Options for every command:
  --endpoint URL    the GraphQL endpoint, path included (overrides LOYALTY_ENDPOINT)
  --page-delay MS   pause between pages (default: 200-500 ms, the pace the API asks of clients)
  --help            this text`;

class UsageError extends Error {}

const COMMON = ['--endpoint', '--page-delay'];
const KNOWN_OPTIONS: Record<string, string[]> = {
  top: ['--space', '--sprint', '--limit', ...COMMON],
  'find-rank': ['--space', '--address', '--sprint', '--max-pages', '--walk', ...COMMON],
  export: ['--space', '--sprint', '--format', '--out', '--resume-from', '--walk', ...COMMON],
};
/** Options that take no value. */
const FLAGS = new Set(['--walk']);

const note = (text: string) => process.stderr.write(`${text}\n`);

function checkOptions(command: string, args: string[]): void {
  const known = KNOWN_OPTIONS[command];
  if (!known) return;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}" (see --help)`);
    if (!known.includes(arg))
      throw new UsageError(`unknown option ${arg} for ${command} (see --help)`);
    if (!FLAGS.has(arg)) i++;
  }
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return value;
}

function int(args: string[], name: string, required: true): number;
function int(args: string[], name: string, required?: false): number | undefined;
function int(args: string[], name: string, required = false): number | undefined {
  const raw = option(args, name);
  if (raw === undefined) {
    if (required) throw new UsageError(`${name} is required`);
    return undefined;
  }
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number`);
  return Number(raw);
}

/**
 * --endpoint, else LOYALTY_ENDPOINT, else the deprecated LOYALTY_URL (a base URL: /query
 * appended, with a warning); none is a usage error, so that a token is never sent to a host the
 * user did not name. A bad URL is a usage error too.
 */
function endpoint(args: string[]): string {
  const flag = option(args, '--endpoint');
  const { LOYALTY_ENDPOINT, LOYALTY_URL } = process.env;
  let source: string;
  let value: string;
  if (flag !== undefined) [source, value] = ['--endpoint', flag];
  else if (LOYALTY_ENDPOINT) [source, value] = ['LOYALTY_ENDPOINT', LOYALTY_ENDPOINT];
  else if (LOYALTY_URL) {
    source = 'LOYALTY_URL';
    value = `${LOYALTY_URL.trim().replace(/\/+$/, '')}/query`;
    note(
      `LOYALTY_URL is deprecated: set LOYALTY_ENDPOINT to the GraphQL endpoint's full URL ` +
        `instead (here LOYALTY_ENDPOINT=${value}).`,
    );
  } else {
    throw new UsageError(
      "set LOYALTY_ENDPOINT (or pass --endpoint) to the GraphQL endpoint's full URL, e.g. " +
        'http://localhost:3000/query: there is no default, so the token goes only where you say',
    );
  }
  try {
    return endpointUrl(value);
  } catch (error) {
    throw new UsageError(`${source}: ${(error as Error).message}`);
  }
}

type Format = 'csv' | 'ndjson';

/** One output line. The walk and the consistent export write the same: username null, not ''. */
function line(row: BoardCsvRow, kind: Format): string {
  const { rank, address, username, points } = row;
  return kind === 'ndjson'
    ? JSON.stringify({ rank, address, username, points })
    : boardCsvLine(row);
}

const walkRow = (entry: Entry): BoardCsvRow => ({
  rank: entry.rank,
  address: entry.address?.address ?? '',
  username: entry.address?.username ?? null,
  points: entry.points,
});

/** A file or stdout, written with backpressure; a write error surfaces at the next write. */
function output(sink: Writable, signal: AbortSignal) {
  let failure: Error | undefined;
  sink.on('error', (error: Error) => (failure ??= error));
  const check = () => {
    if (failure) throw new Error(`cannot write the output: ${failure.message}`);
  };
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        sink.off('drain', done);
        sink.off('error', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      sink.once('drain', done);
      sink.once('error', done);
      signal.addEventListener('abort', done, { once: true });
    });
  return {
    check,
    async write(text: string): Promise<void> {
      check();
      if (!sink.write(text)) await drained();
    },
    /** Flushes and closes a file, throwing if any write failed. */
    async close(): Promise<void> {
      if (sink === process.stdout) {
        // A pipe is written asynchronously: the exit that follows would cut what is still queued.
        if (!sink.destroyed) await new Promise<void>((resolve) => sink.write('', () => resolve()));
      } else if (!sink.destroyed) {
        await new Promise<void>((resolve) => {
          sink.once('close', resolve);
          sink.end();
        });
      }
      check();
    },
    /** Closes a file without flushing it. */
    async discard(): Promise<void> {
      if (sink === process.stdout || sink.destroyed) return;
      await new Promise<void>((resolve) => {
        sink.once('close', resolve);
        sink.destroy();
      });
    },
  };
}

async function exportCommand(
  client: LoyaltyClient,
  args: string[],
  signal: AbortSignal,
): Promise<number> {
  const spaceId = int(args, '--space', true);
  const sprintId = int(args, '--sprint') ?? null;
  const kind = option(args, '--format') ?? 'csv';
  if (kind !== 'csv' && kind !== 'ndjson') throw new UsageError('--format must be csv or ndjson');
  const out = option(args, '--out');
  const resumeFrom = option(args, '--resume-from') ?? null;
  if (resumeFrom === null && !args.includes('--walk')) {
    let snapshot: BoardExport | undefined;
    try {
      snapshot = await client.exportBoard(spaceId, { sprintId, signal });
    } catch (error) {
      if (!(error instanceof LoyaltyApiError) || error.code !== 'EXPORT_NOT_OFFERED') {
        note(`Export failed: ${(error as Error).message}`);
        return 1;
      }
      note(
        'Warning: the server offers no consistent export, so the board is walked page by page. ' +
          'If the board changes during the walk, entries can be missed and ranks repeat or skip.',
      );
    }
    if (snapshot) return exportSnapshot(snapshot, kind, out, signal);
  }
  return exportWalk(client, { spaceId, sprintId, kind, out, resumeFrom }, signal);
}

/**
 * The server's snapshot. With --out FILE (a file, or none yet) it goes to a temporary file beside
 * FILE with FILE's permissions, renamed into place once complete: a failed export leaves no FILE
 * that looks whole, and an older FILE untouched.
 */
async function exportSnapshot(
  snapshot: BoardExport,
  kind: Format,
  out: string | undefined,
  signal: AbortSignal,
): Promise<number> {
  // Only a file to replace goes by a temporary one: a device, a FIFO or /dev/stdout is written.
  const existing = out === undefined ? undefined : await stat(out).catch(() => null);
  const replace = out !== undefined && (existing === null || existing?.isFile() === true);
  const temp = replace
    ? join(dirname(out), `.${basename(out)}.${randomBytes(6).toString('hex')}.tmp`)
    : undefined;
  const sink = temp
    ? createWriteStream(temp, { flags: 'wx', mode: existing ? existing.mode & 0o777 : 0o666 })
    : out
      ? createWriteStream(out)
      : process.stdout;
  const file = output(sink, signal);
  const interactive = process.stderr.isTTY === true;
  const total = snapshot.entries;
  let written = 0;
  try {
    if (kind === 'csv') await file.write(`${BOARD_CSV_HEADER}\n`);
    for await (const row of snapshot) {
      await file.write(`${line(row, kind)}\n`);
      if (++written % 1000 === 0 && interactive)
        process.stderr.write(`\rexported ${written} of ${total}   `);
    }
    await file.close();
    if (temp && out) await rename(temp, out);
    if (interactive) process.stderr.write('\n');
    note(`Exported ${written} entries as of ${snapshot.asOf.toISOString()} (consistent snapshot).`);
    return 0;
  } catch (error) {
    snapshot.cancel();
    if (interactive) process.stderr.write('\n');
    note(`Stopped after ${written} of ${total} entries: ${(error as Error).message}`);
    if (temp) {
      await file.discard();
      await rm(temp, { force: true });
      note(`Nothing was written to ${out}. A consistent export cannot be resumed: run it again.`);
    } else {
      await file.discard();
      note('The output is incomplete. A consistent export cannot be resumed: run it again.');
    }
    return 1;
  }
}

/** The board page by page (no consistent export, --walk, or --resume-from). */
async function exportWalk(
  client: LoyaltyClient,
  walk: {
    spaceId: number;
    sprintId: number | null;
    kind: Format;
    out: string | undefined;
    resumeFrom: string | null;
  },
  signal: AbortSignal,
): Promise<number> {
  const { kind, out, resumeFrom } = walk;
  const sink = out ? createWriteStream(out, { flags: resumeFrom ? 'a' : 'w' }) : process.stdout;
  const file = output(sink, signal);
  const interactive = process.stderr.isTTY === true;
  let cursor = resumeFrom;
  let written = 0;
  try {
    if (kind === 'csv' && !resumeFrom) await file.write(`${BOARD_CSV_HEADER}\n`);
    const board = client.leaderboard(walk.spaceId, {
      sprintId: walk.sprintId,
      after: resumeFrom,
      signal,
      onProgress: (p) => {
        if (interactive)
          process.stderr.write(`\rexported ${written} of ${p.totalCount} (${p.pages} pages)   `);
      },
    });
    for await (const page of board.pages()) {
      for (const entry of page.list) {
        await file.write(`${line(walkRow(entry), kind)}\n`);
        written++;
      }
      file.check();
      cursor = page.pageInfo.endCursor ?? cursor;
    }
    await file.close();
    if (interactive) process.stderr.write('\n');
    note(`Exported ${written} entries.`);
    return 0;
  } catch (error) {
    if (interactive) process.stderr.write('\n');
    note(`Stopped after ${written} entries: ${(error as Error).message}`);
    if (cursor) note(`Resume with: --resume-from ${cursor}`);
    await file.close().catch(() => undefined);
    return 1;
  }
}

async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (!command || args.includes('--help') || command === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (args.some((arg) => arg === '--token' || arg.startsWith('--token='))) {
    throw new UsageError('pass the token in LOYALTY_TOKEN, not on the command line');
  }
  checkOptions(command, rest);
  const token = process.env.LOYALTY_TOKEN;
  if (!token)
    throw new UsageError(
      'set LOYALTY_TOKEN to an access token (Settings > Server API in the dashboard)',
    );
  const delay = int(rest, '--page-delay');
  const client = createClient({
    endpoint: endpoint(rest),
    token,
    pageDelayMs: delay === undefined ? undefined : [delay, delay],
    onRetry: (error, wait) => note(`${error.code}: retrying in ${Math.round(wait)} ms`),
  });
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.stdout.on('error', () => controller.abort()); // a closed pipe (| head) ends the command
  const signal = controller.signal;
  switch (command) {
    case 'top': {
      const limit = Math.min(Math.max(int(rest, '--limit') ?? 10, 1), 1000);
      const page = await client.page(int(rest, '--space', true), {
        sprintId: int(rest, '--sprint') ?? null,
        pageSize: limit,
        signal,
      });
      for (const entry of page.list.slice(0, limit)) {
        process.stdout.write(
          `${entry.rank}\t${entry.points}\t${entry.address?.address ?? ''}\t${entry.address?.username ?? ''}\n`,
        );
      }
      return 0;
    }
    case 'find-rank': {
      const address = option(rest, '--address');
      if (!address) throw new UsageError('--address is required');
      const maxPages = int(rest, '--max-pages');
      if (maxPages === 0) throw new UsageError('--max-pages must be at least 1');
      const result = await client.findRank(int(rest, '--space', true), address, {
        sprintId: int(rest, '--sprint') ?? null,
        maxPages,
        useExtension: !rest.includes('--walk'),
        signal,
      });
      if (result.found) {
        process.stdout.write(
          `${result.entry.rank}\t${result.entry.points}\t${result.entry.address?.address ?? address}\n`,
        );
        return 0;
      }
      note(
        result.reason === 'page-limit'
          ? `Not in the first ${result.pages} pages; gave up (raise --max-pages).`
          : `${address} is not on this board.`,
      );
      return 3;
    }
    case 'export':
      return exportCommand(client, rest, signal);
    default:
      throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      note(error.message);
      process.exit(2);
    }
    note(error instanceof LoyaltyApiError ? `${error.code}: ${error.message}` : String(error));
    process.exit(1);
  },
);
