import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { IngestRecord, ParseResult } from '../records/ingest-record';
import type { RecordOutcome } from '../records/record-outcome';
import { parseRecordLine } from '../records/ingest-record';
import { BatchPartlyApplied, IngestService, IngestSummary, summarize } from './ingest.service';
import type { WriteScope } from './write-scope';

export interface NumberedRecord {
  line: number;
  parsed: ParseResult;
}

/** Records read between two progress reports within a batch. */
const PROGRESS_EVERY = 10_000;

export interface StreamOptions {
  /** Records per batch: one transaction, or `parts` of them. */
  batchSize?: number;
  /** Transactions at once per batch of points records (see IngestService.applyRecordsInParts). */
  parts?: number;
  onRefused?: (line: number, reason: string) => void;
  /** The summary so far: after each batch, and every PROGRESS_EVERY records read. */
  onProgress?: (summary: IngestSummary) => void;
}

/** Numbers the non-blank lines of an NDJSON stream and parses each. */
export async function* readNdjson(input: Readable): AsyncGenerator<NumberedRecord> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === '') continue;
    yield { line, parsed: parseRecordLine(text) };
  }
}

/** What became of one numbered record: `line` is its NDJSON line, or its array position. */
export type NumberedOutcome = { line: number } & RecordOutcome;

/**
 * A stream stopped by a batch that failed (a database error): `summary` counts what was applied
 * before it, with the committed parts of that batch if `partly` (see
 * IngestService.applyRecordsInParts); nothing else from `line` on was applied. Re-running the same
 * records is safe.
 */
export class IngestStopped extends Error {
  constructor(
    readonly line: number,
    readonly summary: IngestSummary,
    override readonly cause: unknown,
    readonly partly = false,
  ) {
    super(`stopped at line ${line}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'IngestStopped';
  }
}

/**
 * Applies numbered records in one transaction, or `parts` (the valid ones; an unparseable one is
 * refused in its place), and answers every record's outcome, in line order. `scope`: where the
 * writer may write (a space token's space), every space when absent.
 */
export async function applyNumbered(
  ingest: IngestService,
  items: readonly NumberedRecord[],
  parts = 1,
  scope: WriteScope = {},
): Promise<NumberedOutcome[]> {
  const records: IngestRecord[] = [];
  for (const { parsed } of items) if (parsed.ok) records.push(parsed.record);
  const applied = records.length > 0 ? await ingest.applyRecordsInParts(records, parts, scope) : [];
  return withLines(items, applied);
}

/**
 * Outcomes with their lines, in line order: `applied` holds the parseable records' outcomes in
 * order, none where a record was not applied (see BatchPartlyApplied), which is left out; an
 * unparseable record is refused in its place, if `parseRefusals`.
 */
function withLines(
  items: readonly NumberedRecord[],
  applied: ReadonlyArray<RecordOutcome | undefined>,
  parseRefusals = true,
): NumberedOutcome[] {
  const outcomes: NumberedOutcome[] = [];
  let next = 0;
  for (const { line, parsed } of items) {
    if (parsed.ok) {
      const outcome = applied[next++];
      if (outcome) outcomes.push({ line, ...outcome });
    } else if (parseRefusals) {
      outcomes.push({
        line,
        status: 'refused',
        ...(parsed.field ? { field: parsed.field } : {}),
        reason: parsed.reason,
      });
    }
  }
  return outcomes;
}

/**
 * Applies a stream of records in batches, one transaction each (or `parts`), in order. Every
 * refused record is reported with its line number; a batch that fails (database error) stops the
 * stream with IngestStopped, leaving the batches before it applied and that batch not at all (or
 * some of its parts, whose refusals are reported and counted), so a re-run is safe.
 */
export async function ingestStream(
  ingest: IngestService,
  source: AsyncIterable<NumberedRecord> | Iterable<NumberedRecord>,
  options: StreamOptions = {},
): Promise<IngestSummary> {
  const batchSize = options.batchSize ?? 2000;
  const summary: IngestSummary = { accepted: 0, duplicates: 0, refused: 0 };
  let batch: NumberedRecord[] = [];
  const report = (outcomes: readonly NumberedOutcome[]) => {
    summarize(outcomes, summary);
    for (const outcome of outcomes) {
      if (outcome.status === 'refused') options.onRefused?.(outcome.line, outcome.reason);
    }
  };
  const flush = async () => {
    if (batch.length === 0) return;
    let outcomes: NumberedOutcome[];
    try {
      outcomes = await applyNumbered(ingest, batch, options.parts);
    } catch (error) {
      if (!(error instanceof BatchPartlyApplied))
        throw new IngestStopped(batch[0].line, summary, error);
      // The committed parts' records only: the batch's unparseable lines come again on a re-run.
      report(withLines(batch, error.outcomes, false));
      throw new IngestStopped(batch[0].line, summary, error.cause, true);
    }
    report(outcomes);
    batch = [];
    options.onProgress?.(summary);
  };
  for await (const item of source) {
    // Unparseable lines count too, so that a file of junk is not held in memory whole.
    batch.push(item);
    if (batch.length >= batchSize) await flush();
    // A batch takes seconds to read: the progress (how much of the file is read) shows it.
    else if (batch.length % PROGRESS_EVERY === 0) options.onProgress?.(summary);
  }
  await flush();
  return summary;
}
