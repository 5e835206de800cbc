import type { ReplicaConnection } from './replicas';

/** A statement of house SQL and its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** One ordered read, in the shapes the databases read it best. */
export interface OrderedRowsQuery {
  /** Every row, in order, as one statement. */
  whole: Statement;
  /** The first `limit` rows. */
  first: (limit: number) => Statement;
  /** The `limit` rows after `last` (a row as an array of its columns). */
  after: (last: readonly unknown[], limit: number) => Statement;
}

/** What an ordered read delivers to, and how long it goes on. */
export interface OrderedRead {
  query: OrderedRowsQuery;
  /** Each row, as an array of its columns straight from the driver. */
  row: (columns: unknown[]) => void;
  /** Asked as the read goes: false stops it (the rest is not read). */
  stillWanted: () => boolean;
  /** Rows per statement or fetch where the read goes in parts. */
  chunkRows: number;
  /** A replica's connection to read on instead of the primary (see ReadReplicas). */
  replica?: ReplicaConnection;
}
