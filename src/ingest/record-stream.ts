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
  // Unparseable lines wait in the batch too, so that refusals are reported in line order.
  let batch: Array<{ line: number; record?: IngestRecord; reason?: string }> = [];
  let records = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const valid = batch.filter((item) => item.record !== undefined);
    const outcomes =
      valid.length > 0 ? await ingest.applyRecords(valid.map((item) => item.record!)) : [];
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'refused') valid[i].reason = outcome.reason;
    });
    summarize(outcomes, summary);
    for (const item of batch) {
      if (item.record === undefined) summary.refused++;
      if (item.reason !== undefined) options.onRefused?.(item.line, item.reason);
    }
    batch = [];
    records = 0;
    options.onBatch?.(summary);
  };
  for await (const { line, parsed } of source) {
    batch.push(parsed.ok ? { line, record: parsed.record } : { line, reason: parsed.reason });
    if (parsed.ok && ++records >= batchSize) await flush();
  }
  await flush();
  return summary;
}
