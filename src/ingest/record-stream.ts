import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { IngestRecord, ParseResult } from './ingest-record';
import { parseRecordLine } from './ingest-record';
import { IngestService, IngestSummary, summarize } from './ingest.service';

export interface NumberedRecord {
  line: number;
  parsed: ParseResult;
}

export interface StreamOptions {
  /** Records per transaction. */
  batchSize?: number;
  onRefused?: (line: number, reason: string) => void;
  onBatch?: (summary: IngestSummary) => void;
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

/**
 * Applies a stream of records in batches, one transaction each, in order. Every refused record is
 * reported with its line number; a batch that fails as a whole (database error) stops the stream,
 * leaving the batches before it applied and that batch not at all, so a re-run is safe.
 */
export async function ingestStream(
  ingest: IngestService,
  source: AsyncIterable<NumberedRecord> | Iterable<NumberedRecord>,
  options: StreamOptions = {},
): Promise<IngestSummary> {
  const batchSize = options.batchSize ?? 2000;
  const summary: IngestSummary = { accepted: 0, duplicates: 0, refused: 0 };
  let batch: Array<{ line: number; record: IngestRecord }> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const outcomes = await ingest.applyRecords(batch.map((item) => item.record));
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'refused') options.onRefused?.(batch[i].line, outcome.reason);
    });
    summarize(outcomes, summary);
    batch = [];
    options.onBatch?.(summary);
  };
  for await (const { line, parsed } of source) {
    if (!parsed.ok) {
      summary.refused++;
      options.onRefused?.(line, parsed.reason);
      continue;
    }
    batch.push({ line, record: parsed.record });
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return summary;
}
