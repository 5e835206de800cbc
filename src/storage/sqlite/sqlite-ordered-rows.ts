import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { OrderedRead, Statement } from '../engine/ordered-rows';

interface SqliteDatabase {
  prepare(sql: string): { raw(toggle: boolean): { all(...parameters: unknown[]): unknown[][] } };
}

/**
 * SQLite reads `chunkRows` rows at a time on the main connection (a statement answers
 * synchronously: one that read a whole board would hold every request up) and yields to requests
 * between them, each chunk a keyset page after the last row of the one before.
 */
export async function readSqliteOrderedRows(
  dataSource: DataSource,
  { query, row, stillWanted, chunkRows }: OrderedRead,
): Promise<void> {
  const database = (dataSource.driver as unknown as { databaseConnection: SqliteDatabase })
    .databaseConnection;
  // Prepared here, not from the shared cache: raw mode is a setting of the statement.
  const prepared = new Map<string, { all(...parameters: unknown[]): unknown[][] }>();
  const run = ({ sql, params }: Statement) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = database.prepare(sql).raw(true)));
    return statement.all(...params);
  };
  let rows = run(query.first(chunkRows));
  for (;;) {
    for (const columns of rows) row(columns);
    if (rows.length < chunkRows || !stillWanted()) return;
    await yieldToRequests();
    rows = run(query.after(rows[rows.length - 1], chunkRows));
  }
}
