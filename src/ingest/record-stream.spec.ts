import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestRecord } from '../records/ingest-record';
import { BatchPartlyApplied, type IngestService } from './ingest.service';
import { accepted, refused } from '../records/record-outcome';
import { ingestStream, IngestStopped, readNdjson } from './record-stream';

describe('ingestStream over readNdjson (import FILE)', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'record-stream-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the file as its batches are applied, not ahead of them', async () => {
    const file = join(dir, 'points.ndjson');
    const lines = Array.from({ length: 200_000 }, (_, i) =>
      JSON.stringify({
        type: 'points',
        key: `stream-${i}`,
        spaceId: 1,
        address: `0x${(i % 5000).toString(16).padStart(40, '0')}`,
        points: 1 + (i % 9),
        occurredAt: '2026-03-01T00:00:00Z',
      }),
    );
    writeFileSync(file, lines.join('\n') + '\n');
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(30_000_000);

    const input = createReadStream(file);
    // A slow database: each batch waits, and notes how much of the file had been read by then.
    const readAtBatch: number[] = [];
    const applied: IngestRecord[][] = [];
    const ingest = {
      applyRecordsInParts: async (records: readonly IngestRecord[]) => {
        readAtBatch.push(input.bytesRead);
        applied.push([...records]);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return records.map(() => accepted());
      },
    } as unknown as IngestService;

    const summary = await ingestStream(ingest, readNdjson(input), { batchSize: 1000 });

    expect(summary).toEqual({ accepted: 200_000, duplicates: 0, refused: 0 });
    expect(applied).toHaveLength(200);
    expect(applied.map((batch) => batch.length)).toEqual(Array(200).fill(1000));
    expect(applied[199][999]).toMatchObject({ key: 'stream-199999' });
    // A batch of 1,000 lines is about 160 KB: each batch finds at most a few of the stream's
    // 64 KiB chunks read beyond its own lines (readline's buffer), never the rest of the file.
    const perBatch = size / 200;
    readAtBatch.forEach((read, i) => expect(read).toBeLessThan((i + 1) * perBatch + 1_000_000));
    expect(readAtBatch[0]).toBeLessThan(size / 20);
  });

  it('reports progress while a batch is read, not only once it is applied', async () => {
    const records = Array.from({ length: 30_000 }, (_, i) => ({
      line: i + 1,
      parsed: {
        ok: true as const,
        record: {
          type: 'points' as const,
          key: `progress-${i}`,
          spaceId: 1,
          address: '0xp',
          points: 1,
          occurredAt: 0,
        },
      },
    }));
    const ingest = {
      applyRecordsInParts: (batch: readonly IngestRecord[]) =>
        Promise.resolve(batch.map(() => accepted())),
    } as unknown as IngestService;
    const reports: number[] = [];
    await ingestStream(ingest, records, {
      batchSize: 25_000,
      onProgress: (summary) => reports.push(summary.accepted),
    });
    // Every 10,000 records read (nothing applied yet), then after each batch.
    expect(reports).toEqual([0, 0, 25_000, 30_000]);
  });

  it('stops at a failed batch with its first line and what was applied, committed parts included', async () => {
    const records = Array.from({ length: 10 }, (_, i) => ({
      line: 2 * i + 1,
      parsed: {
        ok: true as const,
        record: {
          type: 'points' as const,
          key: `stop-${i}`,
          spaceId: 1,
          address: '0xs',
          points: 1,
          occurredAt: 0,
        },
      },
    }));
    const failure = new Error('connection lost');
    let calls = 0;
    const ingest = {
      applyRecordsInParts: (batch: readonly IngestRecord[]) => {
        if (++calls === 1) return Promise.resolve(batch.map(() => accepted()));
        // The second batch: its first two records committed (one refused), the rest failed.
        const outcomes = [accepted(), refused('key', 'conflict'), undefined, undefined];
        return Promise.reject(new BatchPartlyApplied(outcomes, failure));
      },
    } as unknown as IngestService;
    const refusedLines: number[] = [];
    const stopped = await ingestStream(ingest, records, {
      batchSize: 4,
      onRefused: (line) => refusedLines.push(line),
    }).catch((error: unknown) => error);

    expect(stopped).toBeInstanceOf(IngestStopped);
    expect(stopped).toMatchObject({
      line: 9,
      summary: { accepted: 5, duplicates: 0, refused: 1 },
      cause: failure,
      partly: true,
      message: 'stopped at line 9: connection lost',
    });
    expect(refusedLines).toEqual([11]);
    expect(calls).toBe(2);
  });
});
