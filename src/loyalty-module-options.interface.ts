/** Options of {@link LoyaltyModule.forRoot} / `forRootAsync`. */
export interface LoyaltyModuleOptions {
  /**
   * Secret (at least 32 characters) that signs leaderboard cursors. Every instance serving the same
   * boards needs the same one. When absent, a secret is generated on first use and kept in the
   * `service_settings` table, which every instance sharing the database reads.
   */
  cursorSecret?: string;
  /** Records one POST /ingest request may carry (default 10,000). */
  ingestMaxRecords?: number;
}
