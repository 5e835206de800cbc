import type { INestApplicationContext } from '@nestjs/common';
import { demoRecords } from '../../../ingest/demo-dataset';
import { IngestService } from '../../../ingest/ingest.service';
import { ingestStream, NumberedRecord } from '../../../ingest/record-stream';
import { BoardTotalsStore } from '../../../leaderboards/ledger/board-totals.store';
import { parseRecord } from '../../../records/ingest-record';
import { note } from './output';

/** Loads the demo dataset with `entries` addresses per space (for `demo` and `setup-demo`). */
export async function loadDemo(app: INestApplicationContext, entries: number): Promise<void> {
  const started = Date.now();
  function* numbered(): Generator<NumberedRecord> {
    let line = 0;
    for (const value of demoRecords({ entriesPerSpace: entries }))
      yield { line: ++line, parsed: parseRecord(value) };
  }
  const summary = await ingestStream(app.get(IngestService), numbered(), {
    onRefused: (line, reason) => note(`demo record ${line} refused: ${reason}`),
  });
  await app.get(BoardTotalsStore).settleAll();
  note(
    `Demo data loaded: ${summary.accepted} records in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
