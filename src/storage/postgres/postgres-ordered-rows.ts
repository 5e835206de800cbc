import type { DataSource } from 'typeorm';
import type { OrderedRead } from '../engine/ordered-rows';
import { driverOf, PgQueryable, queryPg } from './pg-statements';

/**
 * The one statement as a cursor in a read-only REPEATABLE READ transaction on a connection of its
 * own (a replica's when given), fetched `chunkRows` rows at a time: one consistent read, no sort,
 * no more than a chunk in memory, and no statement time limit (a board of millions takes longer
 * than any request may). A read no longer wanted stops fetching and ends the transaction.
 */
export async function readPostgresOrderedRows(
  dataSource: DataSource,
  { query, row, stillWanted, chunkRows, replica }: OrderedRead,
): Promise<void> {
  const { master, postgres: pg } = driverOf(dataSource);
  let client: PgQueryable;
  let done: (failed: boolean) => void;
  if (replica) {
    client = replica.connection as PgQueryable;
    done = (failed) => replica.done(failed);
  } else {
    const pooled = await master.connect();
    client = pooled;
    done = (failed) => pooled.release(failed);
  }
  let failed = true;
  try {
    await client.query({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' });
    await client.query({ text: 'SET LOCAL statement_timeout = 0' });
    await queryPg(
      client,
      pg,
      `DECLARE ordered_rows NO SCROLL CURSOR FOR ${query.whole.sql}`,
      query.whole.params,
    );
    const fetch = `FETCH FORWARD ${Math.max(1, Math.floor(chunkRows))} FROM ordered_rows`;
    for (;;) {
      const { rows } = await queryPg(client, pg, fetch, [], { rowMode: 'array' });
      for (const columns of rows as unknown[][]) row(columns);
      if (rows.length < chunkRows || !stillWanted()) break;
    }
    await client.query({ text: 'COMMIT' });
    failed = false;
  } finally {
    // A connection whose read failed may be left inside the transaction: closed, not pooled.
    done(failed);
  }
}
