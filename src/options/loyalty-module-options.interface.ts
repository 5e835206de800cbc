/** Options of {@link LoyaltyModule.forRoot} / `forRootAsync`. */
export interface LoyaltyModuleOptions {
  /**
   * Secret (at least 32 characters) that signs leaderboard cursors. Every instance serving the same
   * boards needs the same one. When absent, a secret is generated on first use and kept in the
   * `service_settings` table, which every instance sharing the database reads.
   */
  cursorSecret?: string;
  /**
   * Applies the data source's pending migrations when the module starts (default false), one
   * process at a time: under a lock of the database's own, so that replicas of a host started
   * together on a fresh or half-migrated database leave one to migrate while the others wait, then
   * find the migrations applied. Use it instead of TypeORM's `migrationsRun`, which takes no lock.
   * Every migration of the data source runs, the host's own included, each in a transaction of its
   * own (on SQLite, all in one).
   */
  migrationsRun?: boolean;
  /** Records one POST /ingest request may carry (default 10,000). */
  ingestMaxRecords?: number;
  /** The in-process rank indexes that answer leaderboard pages (see RankIndexService). */
  rankIndex?: RankIndexOptions;
  /** GET /export, whole boards as of one moment (see BoardExportService). */
  boardExport?: BoardExportOptions;
  /** Told of the module's work as it happens, for metrics (see {@link LoyaltyObserver}). */
  observer?: LoyaltyObserver;
  /**
   * Replicas of the module's database for leaderboard pages read with SQL and rank-index loads:
   * MySQL/MariaDB replicas (GTID replication) or PostgreSQL hot standbys (streaming replication).
   * An instance still never shows a page older than a write it acknowledged (see ReadReplicas).
   * Everything else reads the primary.
   */
  readReplicas?: ReadReplicaOptions[];
}

/** A read replica's connection. */
export interface ReadReplicaOptions {
  host: string;
  port?: number;
  user: string;
  password?: string;
  database: string;
  /**
   * PostgreSQL's sslmode for this replica: `require` encrypts without checking the server's
   * certificate, `verify-full` checks it against the system's CAs; absent or `disable`, no TLS.
   * MySQL replicas take no TLS setting, and refuse one.
   */
  tls?: 'disable' | 'require' | 'verify-full';
}

/**
 * What the module reports as it works, for a host's metrics. Every method is optional and called
 * synchronously on the request's path: keep it cheap (count, observe) and never throw.
 */
export interface LoyaltyObserver {
  /** POST /ingest answered: how many of its records were accepted, duplicates or refused. */
  recordsIngested?(counts: { accepted: number; duplicates: number; refused: number }): void;
  /** A board's rank index finished loading: its entries, and how long the load took. */
  rankIndexLoaded?(board: { spaceId: number; sprintId: number }, entries: number, ms: number): void;
  /**
   * POST /ingest applied space records (each created or changed a space), sent with the token
   * `by`: for a host's audit trail. Called after the commit, with the fields each record gave.
   */
  spacesWritten?(spaces: readonly SpaceWritten[], by: { tokenId: string; tokenName: string }): void;
}

/** A space record POST /ingest applied: its id and the fields it set (absent: left as they were). */
export interface SpaceWritten {
  id: number;
  name?: string;
  description?: string | null;
  alias?: string | null;
}

export interface BoardExportOptions {
  /**
   * Exports one process streams at once, each holding a database connection for its length
   * (default 2); one more is refused with 503 and Retry-After.
   */
  maxConcurrent?: number;
  /** An export whose client takes nothing for this long is ended (default 60,000 ms). */
  stallTimeoutMs?: number;
}

export interface RankIndexOptions {
  /**
   * Entries held in memory across all indexed boards (cost: docs/operations.md, Memory); the least
   * recently used boards are dropped past it, and a board larger than it is served from SQL. 0
   * turns the indexes off: every page is read with SQL. Default 5,000,000.
   */
  maxEntries?: number;
  /** How often board_changes is read for writes made by any instance (default 100 ms). */
  pollIntervalMs?: number;
}
