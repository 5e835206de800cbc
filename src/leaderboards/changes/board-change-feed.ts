import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import { num } from '../../storage/dialect/sql-dialect';
import { query } from '../../storage/statements';

/** One row of board_changes: an entry as a transaction left it, or a whole board (no address). */
export interface BoardChange {
  seq: number;
  spaceId: number;
  sprintId: number;
  addressKey: string | null;
  points: number;
  reachedAt: number;
}

/** What the feed hands changes to (the rank index service). */
export interface BoardChangeConsumer {
  /** False while nothing is indexed: the feed then reads sequence numbers only. */
  wantsChanges(): boolean;
  /** Changes in sequence order; called synchronously, never while another call runs. */
  apply(changes: readonly BoardChange[]): void;
  /** The feed lost track (database unreachable too long): drop everything derived from it. */
  lost(): void;
}

/** A run of sequence numbers not seen yet: a transaction still open, or one rolled back. */
interface Gap {
  from: number;
  to: number;
  since: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 100;
const BATCH = 20_000;
/** On start, sequence numbers this far back are checked for transactions still open. */
const START_WINDOW = 100_000;
/** A sequence number missing this long belongs to a rolled-back transaction. */
const GAP_TIMEOUT_MS = 5 * 60_000;
const GAPS_PER_QUERY = 200;
/** Rows are kept this long, then pruned (by any instance). */
const RETENTION_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_STEP = 20_000;
/** Readers use SQL while the last successful poll began longer ago than this. */
const FRESH_WITHIN_MS = 800;
const CATCH_UP_LIMIT_MS = 2_000;
/** Every this many polls, the newest sequence number is checked against the position. */
const SEQUENCE_CHECK_EVERY = 50;

const FULL_COLUMNS =
  'seq, space_id AS spaceId, sprint_id AS sprintId, address_key AS addressKey, points, reached_at AS reachedAt';

/**
 * Tails board_changes for this instance, from first use; every commit reaches it within a poll.
 * Sequence numbers are taken at write, not commit, so unseen numbers are kept as gaps and looked
 * for until GAP_TIMEOUT_MS. An entry's rows are written under its row lock, so they commit in seq
 * order; each poll applies new rows and found gaps sorted by seq, and no entry goes back in time.
 */
@Injectable()
export class BoardChangeFeed implements OnApplicationShutdown {
  private readonly logger = new Logger(BoardChangeFeed.name);
  private consumer?: BoardChangeConsumer;
  private started?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private position = 0;
  private gaps: Gap[] = [];
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private lastSuccess = 0;
  /** Since when reads of board_changes fail, and how many did: null while they work. */
  private failing: { since: number; count: number } | null = null;
  private readonly positions: Array<{ at: number; seq: number }> = [];
  private pruning = false;
  private pruneTimer?: NodeJS.Timeout;
  /** When the last successful poll began: what was committed before then is applied. */
  private freshAsOf = 0;
  private prunedThrough = 0;
  private closed = false;
  private seenChanges = 0;
  private polls = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(LOYALTY_MODULE_OPTIONS) private readonly options: LoyaltyModuleOptions,
  ) {}

  /**
   * Moves whenever boards may have changed as far as this instance knows: a poll found rows, or
   * this instance wrote (see {@link noteWrite}). Response caches compare it.
   */
  get version(): number {
    return this.seenChanges;
  }

  /** This instance committed a write (of any kind): what it shows may have changed. */
  noteWrite(): void {
    this.seenChanges++;
  }

  subscribe(consumer: BoardChangeConsumer): void {
    this.consumer = consumer;
  }

  /**
   * Starts tailing (once). Resolves when every change committed from now on will be delivered to
   * a consumer that already wants changes: a board registered before the call may take its
   * snapshot once this resolves.
   */
  async start(): Promise<void> {
    if (!this.started) {
      this.started = this.begin();
      this.started.catch(() => (this.started = undefined));
    }
    await this.started;
    // A poll under way may have begun before the board was registered, reading numbers only (or a
    // reset after losing track): what it skips committed before it read, so before a snapshot
    // taken once it ends.
    await this.running;
  }

  /**
   * Resolves after a poll that began after this call: what was committed before it is applied.
   * Never waits longer than CATCH_UP_LIMIT_MS (a stuck poll must not hold a writer's answer;
   * pages stop trusting a feed that is behind, see {@link isFresh}).
   */
  async catchUp(): Promise<void> {
    if (!this.started || this.closed) return;
    await this.started.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.schedule(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CATCH_UP_LIMIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Whether the last successful poll began recently enough that what it applied is within the
   * freshness bound: otherwise (database unreachable, polls stuck) readers use SQL.
   */
  isFresh(): boolean {
    return Date.now() - this.freshAsOf < FRESH_WITHIN_MS;
  }

  /**
   * When the last successful poll began (epoch ms): everything committed before it is applied.
   * Undefined until the feed runs (no board indexed yet); its age is the feed's lag.
   */
  get appliedAsOf(): number | undefined {
    return this.started && this.freshAsOf > 0 ? this.freshAsOf : undefined;
  }

  onApplicationShutdown(): void {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
  }

  private async begin(): Promise<void> {
    const started = Date.now();
    await this.reset();
    this.freshAsOf = started;
    const interval = this.options.rankIndex?.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.timer = setInterval(() => void this.schedule(), interval);
    this.timer.unref();
    // Pruning runs apart from polls: a long delete never delays what readers see.
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /** Positions the feed just behind the newest row and learns the gaps among recent rows. */
  private async reset(): Promise<void> {
    const [row]: Array<Record<string, unknown>> = await query(
      this.dataSource,
      'SELECT MIN(seq) AS lowest, MAX(seq) AS highest FROM board_changes',
    );
    const highest = num(row?.highest ?? 0);
    this.position = Math.max(0, highest - START_WINDOW);
    this.prunedThrough = Math.max(0, num(row?.lowest ?? 1) - 1);
    this.gaps = [];
    // Sequence numbers only: the rows themselves are already in anything loaded after this.
    while (await this.readNew(false)) {
      /* until the end of the table */
    }
    this.lastSuccess = Date.now();
  }

  private schedule(): Promise<void> {
    if (!this.running) {
      this.running = this.poll().finally(() => (this.running = null));
      return this.running;
    }
    if (!this.queued) {
      this.queued = this.running.then(() => {
        this.queued = null;
        return this.schedule();
      });
    }
    return this.queued;
  }

  private async poll(): Promise<void> {
    if (this.closed) return;
    const started = Date.now();
    try {
      if (this.lastSuccess > 0 && started - this.lastSuccess > RETENTION_MS / 2) {
        this.logger.warn('Lost track of board changes (database unreachable): reloading indexes');
        this.consumer?.lost();
        await this.reset();
      } else if (++this.polls % SEQUENCE_CHECK_EVERY === 0 && (await this.wentBack())) {
        this.logger.warn('The change sequence went back (failover or restore): reloading indexes');
        this.consumer?.lost();
        await this.reset();
      }
      while (await this.readNew(true)) {
        /* a backlog: read on */
      }
      this.lastSuccess = Date.now();
      this.freshAsOf = started;
      if (this.failing) {
        this.logger.log(
          `Reading board changes works again, after ${this.failing.count} failed reads in ${Math.round((this.lastSuccess - this.failing.since) / 1000)} s`,
        );
        this.failing = null;
      }
    } catch (error) {
      // One line when reads start failing and one when they work again: polls run ten times a
      // second, and an outage is already told by the database health check.
      if (this.failing) this.failing.count++;
      else {
        this.failing = { since: started, count: 1 };
        this.logger.warn(
          `Reading board changes failed: ${(error as Error).message} (said once until it works again)`,
        );
      }
    }
  }

  /** Whether the newest row is behind this feed's position: a failover or a restore. */
  private async wentBack(): Promise<boolean> {
    const [row]: Array<Record<string, unknown>> = await query(
      this.dataSource,
      'SELECT MAX(seq) AS highest FROM board_changes',
    );
    return row?.highest !== null && row?.highest !== undefined && num(row.highest) < this.position;
  }

  /**
   * One batch of new rows, then the gaps, applied together in sequence order. Answers whether a
   * full batch was read (more may follow).
   */
  private async readNew(deliver: boolean): Promise<boolean> {
    // Decided once: a board registered meanwhile waits for this read to end (see start()).
    const full = deliver && (this.consumer?.wantsChanges() ?? false);
    const fresh = await this.select(full, 'seq > ? ORDER BY seq LIMIT ?', [this.position, BATCH]);
    const now = Date.now();
    for (const change of fresh) {
      if (change.seq > this.position + 1) {
        this.gaps.push({ from: this.position + 1, to: change.seq - 1, since: now });
      }
      this.position = change.seq;
    }
    const late = await this.readGaps(full);
    if (deliver && (fresh.length > 0 || late.length > 0)) this.seenChanges++;
    // A query run while nothing was indexed read numbers only: nothing to deliver from it.
    const changes = [...late, ...fresh].filter((change) => change.spaceId !== undefined);
    if (deliver && this.consumer && changes.length > 0) {
      this.consumer.apply(late.length > 0 ? changes.sort((a, b) => a.seq - b.seq) : changes);
    }
    return fresh.length === BATCH;
  }

  /**
   * Rows that appeared in the gaps; found numbers leave the gaps. A gap timed out is dropped only
   * after a successful look at it: one that timed out while the database was unreachable is
   * still read once more.
   */
  private async readGaps(full: boolean): Promise<BoardChange[]> {
    if (this.gaps.length === 0) return [];
    const found: BoardChange[] = [];
    for (let i = 0; i < this.gaps.length; i += GAPS_PER_QUERY) {
      const asked = this.gaps.slice(i, i + GAPS_PER_QUERY);
      const rows = await this.select(
        full,
        asked.map(() => '(seq >= ? AND seq <= ?)').join(' OR '),
        asked.flatMap((gap) => [gap.from, gap.to]),
      );
      for (const row of rows) found.push(row);
    }
    const now = Date.now();
    const live = (gap: Gap) => now - gap.since < GAP_TIMEOUT_MS;
    if (found.length === 0) {
      this.gaps = this.gaps.filter(live);
      return found;
    }
    const seqs = found.map((change) => change.seq).sort((a, b) => a - b);
    const remaining: Gap[] = [];
    let i = 0;
    for (const gap of this.gaps) {
      let from = gap.from;
      while (i < seqs.length && seqs[i] < gap.from) i++;
      for (; i < seqs.length && seqs[i] <= gap.to; i++) {
        if (seqs[i] > from) remaining.push({ from, to: seqs[i] - 1, since: gap.since });
        from = seqs[i] + 1;
      }
      if (from <= gap.to) remaining.push({ from, to: gap.to, since: gap.since });
    }
    this.gaps = remaining.filter(live);
    return found;
  }

  private async select(full: boolean, where: string, parameters: unknown[]) {
    const rows: Array<Record<string, unknown>> = await query(
      this.dataSource,
      `SELECT ${full ? FULL_COLUMNS : 'seq'} FROM board_changes WHERE ${where}`,
      parameters,
    );
    return rows.map((row): BoardChange => ({
      seq: num(row.seq),
      spaceId: row.spaceId as number,
      sprintId: row.sprintId as number,
      addressKey: (row.addressKey as string | null | undefined) ?? null,
      points: num(row.points),
      reachedAt: num(row.reachedAt),
    }));
  }

  /**
   * Deletes rows older than RETENTION_MS, a step at a time. Every instance prunes; deleting what
   * another already deleted costs an index lookup.
   */
  private async prune(): Promise<void> {
    if (this.pruning) return;
    this.pruning = true;
    try {
      await this.pruneOnce();
    } catch (error) {
      this.logger.warn(`Pruning board changes failed: ${(error as Error).message}`);
    } finally {
      this.pruning = false;
    }
  }

  private async pruneOnce(): Promise<void> {
    const now = Date.now();
    this.positions.push({ at: now, seq: this.position });
    let target = 0;
    while (this.positions.length > 0 && this.positions[0].at <= now - RETENTION_MS) {
      target = this.positions.shift()!.seq;
    }
    // Never past a gap: a late row in it must be read before it may go.
    const oldestGap = this.gaps.reduce((low, gap) => Math.min(low, gap.from - 1), target);
    target = Math.min(target, oldestGap);
    // Nor past a change that board_entries may still lack (SQLite, see BoardBacklog).
    const [unfolded]: Array<Record<string, unknown>> = await query(
      this.dataSource,
      'SELECT MIN(unfolded_since) AS since FROM boards',
    );
    if (unfolded?.since !== null && unfolded?.since !== undefined)
      target = Math.min(target, num(unfolded.since) - 1);
    while (this.prunedThrough < target && !this.closed) {
      const through = Math.min(target, this.prunedThrough + PRUNE_STEP);
      await query(this.dataSource, 'DELETE FROM board_changes WHERE seq > ? AND seq <= ?', [
        this.prunedThrough,
        through,
      ]);
      this.prunedThrough = through;
    }
  }
}
