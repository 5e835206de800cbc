import type { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import type { OrderedRead } from '../engine/ordered-rows';

/** The part of a mysql2 connection (its callback API) a streamed read uses. */
export interface MysqlStreamingConnection {
  query(options: { sql: string; rowsAsArray: boolean }, parameters: unknown[]): EventEmitter;
  release(): void;
  destroy(): void;
}

/**
 * MySQL/MariaDB stream the one statement on a connection of the pool (one consistent read, no
 * sort), dropped if the read is abandoned, or on the replica's connection when given.
 */
export async function readMysqlOrderedRows(
  dataSource: DataSource,
  { query, row, stillWanted, replica }: OrderedRead,
): Promise<void> {
  const whole = query.whole;
  const connection: MysqlStreamingConnection = replica
    ? {
        query: (options, parameters) =>
          (replica.connection as MysqlStreamingConnection).query(options, parameters),
        release: () => replica.done(),
        destroy: () => replica.done(true),
      }
    : await (
        dataSource.driver as unknown as {
          obtainMasterConnection(): Promise<MysqlStreamingConnection>;
        }
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
