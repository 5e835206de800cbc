import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { dialectOf } from './dialect/sql-dialect';
import type { ReplicaConnection } from './replica/read-replicas';

/** A statement and its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** One ordered read, in the shapes the databases read it best. */
export interface OrderedRowsQuery {
  /** Every row, in order, as one statement. */
  whole: Statement;
  /** The first `limit` rows. */
  first(limit: number): Statement;
  /** The `limit` rows after `last` (a row as an array of its columns). */
  after(last: readonly unknown[], limit: number): Statement;
}

/**
 * Reads every row of `query` in order, as arrays of columns straight from the driver (no entity or
 * row objects), until done or `stillWanted` answers false. SQLite reads `chunkRows` at a time on
 * the main connection and yields to requests between them; MySQL/MariaDB stream the one statement on a
 * connection of the pool (one consistent read, no sort), dropped if the read is abandoned, or on
 * `replica`'s connection when given (see ReadReplicas.connectionAtPrimary).
 */
export async function readOrderedRows(
  dataSource: DataSource,
  query: OrderedRowsQuery,
  row: (columns: unknown[]) => void,
  stillWanted: () => boolean,
  chunkRows: number,
  replica?: ReplicaConnection,
): Promise<void> {
  if (dialectOf(dataSource).kind === 'sqlite')
    return readInChunks(dataSource, query, row, stillWanted, chunkRows);
  return streamWhole(dataSource, query.whole, row, stillWanted, replica);
}

interface SqliteDatabase {
  prepare(sql: string): { raw(toggle: boolean): { all(...parameters: unknown[]): unknown[][] } };
}

async function readInChunks(
  dataSource: DataSource,
  query: OrderedRowsQuery,
  row: (columns: unknown[]) => void,
  stillWanted: () => boolean,
  chunkRows: number,
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

interface MysqlConnection {
  query(options: { sql: string; rowsAsArray: boolean }, parameters: unknown[]): NodeJS.EventEmitter;
  release(): void;
  destroy(): void;
}

async function streamWhole(
  dataSource: DataSource,
  whole: Statement,
  row: (columns: unknown[]) => void,
  stillWanted: () => boolean,
  replica?: ReplicaConnection,
): Promise<void> {
  const connection: MysqlConnection = replica
    ? {
        query: (options, parameters) => replica.connection.query(options, parameters),
        release: () => replica.done(),
        destroy: () => replica.done(true),
      }
    : await (
        dataSource.driver as unknown as { obtainMasterConnection(): Promise<MysqlConnection> }
      ).obtainMasterConnection();
  let abandoned = false;
  try {
    await new Promise<void>((resolve, reject) => {
      connection
        .query({ sql: whole.sql, rowsAsArray: true }, whole.params)
        .on('result', (columns: unknown[]) => {
          if (abandoned) return;
          if (!stillWanted()) {
            // Stop streaming rows nobody will use.
            abandoned = true;
            connection.destroy();
            resolve();
            return;
          }
          row(columns);
        })
        .on('error', (error: Error) => (abandoned ? resolve() : reject(error)))
        .on('end', resolve);
    });
  } finally {
    if (!abandoned) connection.release();
  }
}
