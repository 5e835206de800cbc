import { Readable } from 'node:stream';
import { BOARD_CSV_HEADER, boardCsvLine, BoardCsvRow } from '../common/csv';
import type { BoardExport } from './board-export.service';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
};

/** How long an export waits for its client to take more before it gives up (default 60 s). */
export const DEFAULT_EXPORT_STALL_MS = 60_000;

/** A row as one NDJSON line: the CSV's columns, username null when there is none. */
function ndjsonLine(row: BoardCsvRow): string {
  return JSON.stringify({
    rank: row.rank,
    address: row.address,
    username: row.username,
    points: row.points,
  });
}

/**
 * The export's body: the rows in `format`, read from its snapshot only as fast as the client takes
 * them (one page of the snapshot per chunk), so memory stays one page whatever the board's size.
 * Destroying the stream (the client went away, or it stopped reading for `stallMs`) ends the
 * snapshot at once.
 */
export function exportStream(
  board: BoardExport,
  format: ExportFormat,
  stallMs = DEFAULT_EXPORT_STALL_MS,
): Readable {
  const pages = board.pages();
  const line = format === 'csv' ? boardCsvLine : ndjsonLine;
  let header = format === 'csv' ? `${BOARD_CSV_HEADER}\n` : '';
  let stall: NodeJS.Timeout | undefined;
  // Armed from the start and after each chunk, disarmed while the client takes more: a stream
  // nobody reads (a host's interceptor that serialises the answer instead) ends too.
  const arm = () => {
    clearTimeout(stall);
    stall = setTimeout(() => {
      stream.destroy(new Error(`The client took nothing for ${stallMs} ms`));
    }, stallMs);
    stall.unref();
  };
  const stream = new Readable({
    read() {
      clearTimeout(stall);
      pages.next().then(
        ({ value, done }) => {
          if (stream.destroyed) return;
          if (done) {
            if (header) stream.push(header); // an empty board: the CSV header alone
            stream.push(null);
            return;
          }
          let text = header;
          header = '';
          for (const row of value) text += `${line(row)}\n`;
          stream.push(text);
          arm();
        },
        (error: unknown) => stream.destroy(error as Error),
      );
    },
    destroy(error, callback) {
      clearTimeout(stall);
      // Ends the snapshot (a page being read finishes first); close() covers pages never begun.
      pages
        .return(undefined)
        .then(() => board.close())
        .then(
          () => callback(error),
          (closing: unknown) => callback(error ?? (closing as Error)),
        );
    },
  });
  arm();
  return stream;
}
