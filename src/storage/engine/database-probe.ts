/** Asks the database whether it answers, for a health check. */
export interface DatabaseProbe {
  /** Resolves when the database answers `SELECT 1`. */
  select1(): Promise<void>;
  /** Drops whatever the last probe held (it failed or did not answer in time). */
  reset(): void;
  /** Gives every pooled connection this statement and lock-wait timeout, where the database can. */
  limitStatements(timeoutMs: number): void;
  close(): void;
}
