import { DataSource } from 'typeorm';

/**
 * SQLite: the connection write transactions run on. TypeORM's better-sqlite3 driver has one
 * connection, and a transaction on it would swallow every other statement of the process (readers
 * would see uncommitted rows, and a token created meanwhile would roll back with it). So writes get
 * a connection of their own; readers on the main connection keep seeing the last commit (WAL).
 */
export class WriterConnection {
  private writer?: Promise<DataSource>;

  constructor(private readonly main: DataSource) {}

  /** The writer, opened on first use (and again after {@link discard}). */
  get(): Promise<DataSource> {
    const file = (this.main.options as { database?: unknown }).database;
    // An in-memory database exists once per connection: there is no second one to open.
    if (file === ':memory:') return Promise.resolve(this.main);
    if (!this.writer) {
      this.writer = new DataSource({ ...this.main.options, migrationsRun: false }).initialize();
      this.writer.catch(() => (this.writer = undefined));
    }
    return this.writer;
  }

  /**
   * Closes a writer whose transaction state cannot be trusted: SQLite rolled a transaction back
   * itself (a full disk, an I/O error), so TypeORM's ROLLBACK failed and left its query runner
   * believing a transaction is open. The next use opens another.
   */
  async discard(source: DataSource): Promise<void> {
    if (source === this.main) return;
    this.writer = undefined;
    await source.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    const writer = await this.writer?.catch(() => undefined);
    this.writer = undefined;
    if (writer?.isInitialized && writer !== this.main) await writer.destroy();
  }
}
