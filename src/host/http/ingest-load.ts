import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { COMMIT_DELAY_MS, MAX_GROUP, WriteLoadHint } from '../../storage/transactions/write-load';

/**
 * How long an answered client on a kept-open connection still counts as in flight: its next
 * request is read only after its group's answers went out, within the group's wait for company.
 */
const RETURN_MS = COMMIT_DELAY_MS;
/** How long a peak of requests in flight is remembered: between one and two of these. */
const PEAK_WINDOW_MS = 1_000;

/**
 * Counts the ingest requests in flight, and the clients likely to send the next ones, for the
 * write path's group commit (see WriteLoadHint): without the latter, clients that wait for their
 * answer would form groups of half of them, and a larger group costs little more to commit.
 */
@Injectable()
export class IngestLoad implements WriteLoadHint {
  private inFlight = 0;
  /** Clients answered lately that may be back (see RETURN_MS), by when, oldest first. */
  private readonly returning = new Map<object, number>();
  private peak = { now: 0, before: 0, windowStart: 0 };
  /**
   * After a wait for company ran out: the units that had come, taken as the number of clients for
   * a PEAK_WINDOW_MS. A client may send its next request on another of its connections (fetch's
   * pool does), and the one it left then counts as a client still to come.
   */
  private ceiling = { clients: MAX_GROUP, until: 0 };

  /**
   * A request is in flight, from its headers to its answer: call the answer when it ends.
   * `client` is the request's connection, if it may carry the client's next request: the client
   * then counts as in flight for RETURN_MS after the answer, or until clientGone.
   */
  enterRequest(client?: object): () => void {
    if (client) this.returning.delete(client);
    this.inFlight++;
    this.refreshPeak(performance.now());
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight--;
      if (!client) return;
      // Deleted first: set() would keep the place of a client that is still in the map.
      this.returning.delete(client);
      this.returning.set(client, performance.now());
    };
  }

  /** The client's connection closed: no request of it is coming on it. */
  clientGone(client: object): void {
    this.returning.delete(client);
  }

  /** Requests in flight now. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** The most requests in flight at once recently, lowered by a recent wait that ran out. */
  expectedUnits(): number {
    const now = performance.now();
    const peak = this.refreshPeak(now);
    // The ceiling lowers the guess, never the requests seen in flight now.
    if (now >= this.ceiling.until) return peak;
    return Math.max(this.inFlight, Math.min(peak, this.ceiling.clients));
  }

  /**
   * The most requests in flight at once in this window or the one before, counting the clients
   * answered in the last RETURN_MS that are not back yet.
   */
  private refreshPeak(now: number): number {
    // In the order they were answered: a client is deleted when it comes back.
    for (const [client, answeredAt] of this.returning) {
      if (now - answeredAt <= RETURN_MS) break;
      this.returning.delete(client);
    }
    if (now - this.peak.windowStart >= PEAK_WINDOW_MS) {
      // Two windows late: no request entered in the one that just ended, so it leaves no peak.
      const idle = now - this.peak.windowStart >= 2 * PEAK_WINDOW_MS;
      this.peak = { now: 0, before: idle ? 0 : this.peak.now, windowStart: now };
    }
    this.peak.now = Math.max(this.peak.now, this.inFlight + this.returning.size);
    return Math.max(this.peak.now, this.peak.before);
  }

  waitedInVain(unitsCame: number): void {
    this.ceiling = {
      clients: Math.max(1, unitsCame),
      until: performance.now() + PEAK_WINDOW_MS,
    };
  }
}
