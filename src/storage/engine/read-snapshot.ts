export type SnapshotRow = Record<string, unknown>;

/**
 * Reads that all see the database as of one moment, on a connection of their own, while writers
 * go on. Nothing is locked; what a write commits meanwhile is simply not seen. Hold one only as
 * long as needed: SQLite cannot checkpoint the WAL past an open snapshot, and the servers keep the
 * old row versions it may read.
 */
export interface ReadSnapshot {
  /** When the snapshot was taken (Date.now()). */
  readonly takenAt: number;
  /** Runs a SELECT of house SQL in the snapshot. */
  all(sql: string, params: readonly unknown[]): Promise<SnapshotRow[]>;
  /** Ends the read transaction and gives the connection back; safe to call twice. */
  release(): Promise<void>;
}
