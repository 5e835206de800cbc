/**
 * What the caller of the write path knows of the load to come, for a runner that commits units in
 * groups (SQLite): a group waits a moment for company only while more units are expected. The
 * module's host feeds one in (our server counts ingest requests in flight); without one, groups
 * never wait.
 */
export interface WriteLoadHint {
  /** How many units are likely to come at once now (1: do not wait for company). */
  expectedUnits(): number;
  /** A wait for company ran out with this many units come: expect no more than that for a while. */
  waitedInVain(unitsCame: number): void;
}

/** Units a runner that commits in groups (SQLite's) runs together in one transaction, at most. */
export const MAX_GROUP = 16;
/** How long such a group waits at most for the units its load hint expects. */
export const COMMIT_DELAY_MS = 20;
