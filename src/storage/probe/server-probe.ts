import type { DatabaseProbe } from '../engine/database-probe';

/** A connection of the probe's own, outside the pool. */
export interface ProbeConnection {
  /** Resolves when the server answers `SELECT 1` on it. */
  select1(): Promise<void>;
  /** Calls `listener` once the connection errs or ends. */
  onGone(listener: () => void): void;
  /** Closes it at once, its socket too (a server that no longer answers would keep it open). */
  destroy(): void;
}

/**
 * A database server's probe: a connection of its own, outside the pool: with every pooled
 * connection busy on slow requests, a probe that queued for one would call a loaded database down.
 * The engine says how to open one and how to limit the pool's statements.
 */
export class ServerProbe implements DatabaseProbe {
  /** Opened on first use and after a failure. */
  private probeConnection?: Promise<ProbeConnection>;
  private closed = false;

  constructor(
    private readonly connect: () => Promise<ProbeConnection>,
    private readonly limit: (timeoutMs: number) => void,
  ) {}

  async select1(): Promise<void> {
    const reused = this.probeConnection !== undefined;
    const first = this.open();
    try {
      await (await first).select1();
    } catch (error) {
      // A kept connection may have died with a server restart: one more try on a fresh one
      // before the database is called down.
      if (!reused || this.closed) throw error;
      this.drop(first);
      await (await this.open()).select1();
    }
  }

  reset(): void {
    this.drop();
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /** A request cut off at its deadline then does not leave its query holding a connection. */
  limitStatements(timeoutMs: number): void {
    this.limit(timeoutMs);
  }

  private open(): Promise<ProbeConnection> {
    if (this.probeConnection) return this.probeConnection;
    const opened = this.connect();
    this.probeConnection = opened;
    opened.then(
      (connection) => {
        // Opened after close (a probe that was still connecting): not kept.
        if (this.closed) return this.drop(opened);
        // A connection that errs or ends is replaced on next use.
        connection.onGone(() => this.drop(opened));
      },
      () => undefined,
    );
    return opened;
  }

  /** Closes this probe connection (the current one by default). */
  private drop(which = this.probeConnection): void {
    if (!which) return;
    if (this.probeConnection === which) this.probeConnection = undefined;
    which.then((connection) => connection.destroy()).catch(() => undefined);
  }
}
