import type { DataSource } from 'typeorm';
import type { OrderedRead } from './engine/ordered-rows';
import { engineOf } from './engines';

export type { OrderedRead, OrderedRowsQuery, Statement } from './engine/ordered-rows';

/**
 * Reads every row of an ordered query, as arrays of columns straight from the driver (no entity
 * or row objects), until done or `stillWanted` answers false, in the way that suits the database:
 * keyset chunks on SQLite's main connection (yielding to requests between them), one streamed
 * statement on MySQL/MariaDB, a cursor on PostgreSQL; on the replica's connection when given (see
 * ReadReplicas.connectionAtPrimary).
 */
export function readOrderedRows(dataSource: DataSource, read: OrderedRead): Promise<void> {
  return engineOf(dataSource).readOrderedRows(dataSource, read);
}
