import type { ReadStream } from 'node:fs';
import type { IngestSummary } from '../../../ingest/ingest.service';

const EVERY_MS_WITHOUT_TTY = 10_000;

/** "N accepted, N duplicates, N refused": the bar's counts and the import's last line. */
export const describeSummary = (summary: IngestSummary): string =>
  `${summary.accepted} accepted, ${summary.duplicates} duplicates, ${summary.refused} refused`;

/**
 * The import's progress on stderr: a bar redrawn in place on a terminal, a line every 10 s
 * otherwise (logs stay readable). Notes (refused lines) are printed above the bar.
 */
export class ImportProgress {
  private readonly started = Date.now();
  private lastLine = 0;
  private shown = false;
  private readonly tty = Boolean(process.stderr.isTTY);

  /** `input` is only looked at (its bytesRead), never listened to: that would start it early. */
  constructor(
    private readonly totalBytes: number,
    private readonly input: ReadStream,
  ) {}

  update(summary: IngestSummary): void {
    const now = Date.now();
    if (!this.tty && now - this.lastLine < EVERY_MS_WITHOUT_TTY) return;
    this.lastLine = now;
    const line = this.describe(summary);
    if (this.tty) {
      process.stderr.write(`\r\u001b[2K${line}`);
      this.shown = true;
    } else {
      process.stderr.write(`${line}\n`);
    }
  }

  note(text: string): void {
    if (this.shown) process.stderr.write('\r\u001b[2K');
    this.shown = false;
    process.stderr.write(`${text}\n`);
  }

  finish(summary: IngestSummary): void {
    if (this.tty) process.stderr.write(`\r\u001b[2K${this.describe(summary)}\n`);
    this.shown = false;
  }

  private describe(summary: IngestSummary): string {
    const records = summary.accepted + summary.duplicates + summary.refused;
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001);
    const share = this.totalBytes > 0 ? Math.min(this.input.bytesRead / this.totalBytes, 1) : 1;
    const width = 24;
    const filled = Math.round(share * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
    return (
      `${bar} ${(share * 100).toFixed(0).padStart(3)}%  ${records.toLocaleString('en-US')} records` +
      `  ${Math.round(records / seconds).toLocaleString('en-US')}/s` +
      `  (${describeSummary(summary)})`
    );
  }
}
