import { createReadStream, existsSync, statSync } from 'node:fs';
import { IngestService, IngestSummary } from '../../../ingest/ingest.service';
import { ingestStream, IngestStopped, readNdjson } from '../../../ingest/record-stream';
import { BoardTotalsStore } from '../../../leaderboards/ledger/board-totals.store';
import { withContext } from '../support/app-context';
import { parseFlags, positiveInt, UsageError } from '../support/cli-args';
import { describeFailure, note } from '../support/output';
import { describeSummary, ImportProgress } from '../support/progress';
import type { Command } from './command';

export const importCommand: Command<{ file: string; batchSize: number }> = {
  name: 'import',
  usage: 'import FILE [--batch-size N]',
  help: `  import FILE [--batch-size N] apply NDJSON records (docs/ingest.md), N per transaction
                              (default 200000; on MySQL/MariaDB a batch of points is two
                              transactions over separate address ranges); progress and
                              refused lines (with their line number) on stderr; exit 1 if any
                              was refused, or if a database error stopped it (it says at which
                              line, and what it applied). Safe to stop and re-run`,
  parse(args) {
    // FILE comes first, and is checked before the options, as it always was.
    const file = args[0];
    if (!file || file.startsWith('--')) throw new UsageError(`usage: ${this.usage}`);
    if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
    const option = parseFlags(args.slice(1), ['batch-size'], this.usage);
    return { file, batchSize: positiveInt(option('batch-size'), '--batch-size', 200_000) };
  },
  async run({ file, batchSize }, config) {
    const input = createReadStream(file);
    const progress = new ImportProgress(statSync(file).size, input);
    let summary: IngestSummary;
    try {
      summary = await withContext(config, async (app) => {
        const applied = await ingestStream(app.get(IngestService), readNdjson(input), {
          batchSize,
          // MySQL/MariaDB: two transactions at once per batch, over separate address ranges.
          parts: 2,
          onRefused: (line, reason) => progress.note(`line ${line}: ${reason}`),
          onProgress: (sofar) => progress.update(sofar),
        });
        // SQLite: board changes left in the change log (see BoardBacklog) go into the boards'
        // rows before the process ends, as part of the import's time.
        await app.get(BoardTotalsStore).settleAll();
        return applied;
      });
    } catch (error) {
      if (!(error instanceof IngestStopped)) throw error;
      progress.finish(error.summary);
      note(`Import of ${file} stopped at line ${error.line}: ${describeFailure(error.cause)}`);
      note(`Applied before it: ${describeSummary(error.summary)}.`);
      note(
        error.partly
          ? `Of the batch from line ${error.line}, only the part counted above was applied; nothing after it.`
          : `Nothing from line ${error.line} on was applied, unless the failure came during its batch's commit.`,
      );
      note('Run the same command again to go on: records already applied count as duplicates.');
      return 1;
    }
    progress.finish(summary);
    note(`Imported ${file}: ${describeSummary(summary)}`);
    return summary.refused > 0 ? 1 : 0;
  },
};
