import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type {
  LoyaltyModuleOptions,
  LoyaltyObserver,
} from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import { notifyObserver } from '../../options/notify-observer';
import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../../storage/sql-dialect.provider';
import { readOrderedRows } from '../../storage/ordered-rows';
import { parallelBoardRead } from '../../storage/parallel-board-read';
import { ReadReplicas } from '../../storage/replica/read-replicas';
import { BoardTotalsStore } from '../ledger/board-totals.store';
import { BoardSql, boardSql, keysetPageParams, splitParams } from '../read/board-sql';
import { SqlBoardReader } from '../read/sql-board-reader';
import type { BoardRef } from '../ranking/ranking';
import { BoardChange, BoardChangeConsumer, BoardChangeFeed } from '../changes/board-change-feed';
import { BoardIndex } from './board-index';

export const DEFAULT_MAX_ENTRIES = 5_000_000;
/** Rows per statement where a board loads in keyset chunks (see readOrderedRows). */
const LOAD_CHUNK = 50_000;
/** Boards from this size are read by worker threads where the database offers them. */
const WORKER_FROM = LOAD_CHUNK;
/** After a failed load, or for a board too large to hold, SQL serves it this long before a retry. */
const RETRY_AFTER_MS = 30_000;

interface BoardState {
  readonly key: string;
  readonly board: BoardRef;
  /** Set once loaded and caught up; from then on kept fresh by the feed. */
  index?: BoardIndex;
  loading?: Promise<void>;
  /** Changes delivered while loading, applied once the load ends. */
  pending: BoardChange[];
  lastUsed: number;
  /** While set (a failed load, a board over the budget): SQL answers until then. */
  sqlUntil?: number;
}

export interface RankIndexStats {
  maxEntries: number;
  entries: number;
  bytes: number;
  boards: Array<{ spaceId: number; sprintId: number; entries: number; bytes: number }>;
}

/**
 * This instance's rank indexes, one {@link BoardIndex} per board, loaded on first use (SQL answers
 * meanwhile; changes committed during the load are queued, so it is exact) and kept fresh from
 * {@link BoardChangeFeed}. Own writes are applied before their answer ({@link catchUp}); at most
 * `maxEntries` entries, least recently used boards dropped.
 */
@Injectable()
export class RankIndexService implements BoardChangeConsumer, OnApplicationShutdown {
  private readonly logger = new Logger(RankIndexService.name);
  private readonly boards = new Map<string, BoardState>();
  private readonly sql: BoardSql;
  readonly maxEntries: number;
  private readonly observer?: LoyaltyObserver;
  private closed = false;
  /** Aborted at shutdown: stops the worker threads of a board being read. */
  private readonly shutdown = new AbortController();
  /** Boards being read by worker threads (one at a time: each read takes up to two cores). */
  private workerReads = 0;
  /** Set once a worker read failed: the next would fail alike. */
  private workersFailed = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly feed: BoardChangeFeed,
    private readonly sqlReader: SqlBoardReader,
    private readonly totalsStore: BoardTotalsStore,
    private readonly replicas: ReadReplicas,
    @InjectSqlDialect() dialect: SqlDialect,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.sql = boardSql(dialect);
    // An in-memory SQLite database has one connection, the writers' too: the feed would read
    // uncommitted rows there. Pages come from SQL.
    const inMemory = dataSource.options.database === ':memory:';
    this.maxEntries = inMemory ? 0 : (options.rankIndex?.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.observer = options.observer;
    feed.subscribe(this);
  }

  /**
   * The board's index when it is ready and the feed keeping it is current; otherwise undefined
   * (the caller reads SQL), and the board starts loading if it is not.
   */
  indexFor(board: BoardRef): BoardIndex | undefined {
    if (this.maxEntries <= 0) return undefined;
    const state = this.stateOf(board);
    state.lastUsed = Date.now();
    return state.index && this.feed.isFresh() ? state.index : undefined;
  }

  /** Loads a board's index (if it is not loaded) and resolves when it is ready. */
  async warm(board: BoardRef): Promise<void> {
    if (this.maxEntries <= 0) return;
    const state = this.stateOf(board);
    state.lastUsed = Date.now();
    await state.loading;
  }

  /**
   * Called by this instance's writers after they commit: resolves once every write committed
   * before the call is in the indexes.
   */
  catchUp(): Promise<void> {
    this.feed.noteWrite();
    return this.boards.size > 0 ? this.feed.catchUp() : Promise.resolve();
  }

  stats(): RankIndexStats {
    const boards = [...this.boards.values()]
      .filter((state) => state.index)
      .map((state) => ({
        ...state.board,
        entries: state.index!.size,
        bytes: state.index!.bytes,
      }));
    return {
      maxEntries: this.maxEntries,
      entries: boards.reduce((sum, board) => sum + board.entries, 0),
      bytes: boards.reduce((sum, board) => sum + board.bytes, 0),
      boards,
    };
  }

  wantsChanges(): boolean {
    for (const state of this.boards.values()) if (state.index || state.loading) return true;
    return false;
  }

  apply(changes: readonly BoardChange[]): void {
    for (const change of changes) {
      const key = keyOf(change);
      const state = this.boards.get(key);
      if (!state) continue;
      if (change.addressKey === null) {
        // The whole board was rebuilt: load it again on next use.
        this.boards.delete(key);
      } else if (state.index) {
        state.index.set(change.addressKey, change.points, change.reachedAt);
      } else if (state.loading) {
        state.pending.push(change);
      }
    }
    // Boards grow with their writes, too.
    this.evictBeyondBudget();
  }

  lost(): void {
    this.boards.clear();
  }

  onApplicationShutdown(): void {
    this.closed = true;
    this.shutdown.abort();
    this.boards.clear();
  }

  private stateOf(board: BoardRef): BoardState {
    const key = keyOf(board);
    let state = this.boards.get(key);
    if (state?.sqlUntil !== undefined && Date.now() >= state.sqlUntil) {
      this.boards.delete(key);
      state = undefined;
    }
    if (!state) {
      state = { key, board, pending: [], lastUsed: Date.now() };
      // Registered before anything is read: every change committed from here on is queued.
      this.boards.set(key, state);
      const loading = this.load(state);
      state.loading = loading;
      void loading.finally(() => {
        if (state!.loading === loading) state!.loading = undefined;
      });
    }
    return state;
  }

  private async load(state: BoardState): Promise<void> {
    const started = Date.now();
    try {
      await this.feed.start();
      const expected = await this.sqlReader.countEntries(state.board);
      if (expected > this.maxEntries) {
        this.logger.warn(
          `Board ${state.key} has ${expected} entries, over RANK_INDEX_MAX_ENTRIES (${this.maxEntries}): served from SQL`,
        );
        this.serveFromSql(state);
        return;
      }
      let index = new BoardIndex(expected);
      // Changes committed before the board was registered and not yet in board_entries (SQLite).
      await this.totalsStore.settle(state.board);
      let read = false;
      try {
        read = await this.readBoardInWorker(state, index, expected);
      } catch (error) {
        // Whatever failed (a database not in WAL mode, threads not allowed) would fail again.
        this.workersFailed = true;
        this.logger.warn(
          `Reading board ${state.key} in worker threads failed (${(error as Error).message}): this instance reads boards on its main connection from now on`,
        );
        index = new BoardIndex(expected);
      }
      if (!read) {
        const target = index;
        await this.readBoard(state, (addressKey, points, reachedAt) =>
          target.load(addressKey, points, reachedAt),
        );
      }
      // Shut down, reset or dropped meanwhile (the read may have stopped short).
      if (this.closed || this.boards.get(state.key) !== state) return;
      index.finishLoad();
      for (const change of state.pending) {
        if (change.addressKey !== null)
          index.set(change.addressKey, change.points, change.reachedAt);
      }
      state.pending = [];
      state.index = index;
      const ms = Date.now() - started;
      this.logger.log(`Rank index of board ${state.key}: ${index.size} entries in ${ms} ms`);
      notifyObserver(() => this.observer?.rankIndexLoaded?.(state.board, index.size, ms));
      this.evictBeyondBudget(state);
    } catch (error) {
      if (this.closed) return;
      this.logger.warn(
        `Loading the rank index of board ${state.key} failed: ${(error as Error).message}`,
      );
      this.serveFromSql(state);
    }
  }

  private serveFromSql(state: BoardState): void {
    state.pending = [];
    state.sqlUntil = Date.now() + RETRY_AFTER_MS;
  }

  /** Drops the least recently used boards while the total is over the budget. */
  private evictBeyondBudget(keep?: BoardState): void {
    let total = 0;
    for (const state of this.boards.values()) total += state.index?.size ?? 0;
    if (total <= this.maxEntries) return;
    const byAge = [...this.boards.values()]
      .filter((state) => state.index && state !== keep)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    for (const state of byAge) {
      if (total <= this.maxEntries) break;
      total -= state.index!.size;
      this.boards.delete(state.key);
    }
  }

  /**
   * A database that offers whole-board reads in worker threads (a SQLite file), a board of
   * WORKER_FROM entries or more, and no other board being read so: the board read and decoded in
   * worker threads, its entries placed here as they arrive (see parallelBoardRead). False, having
   * read nothing, where that does not apply; rejects when a worker fails (the caller then reads on
   * the main connection, into a fresh index).
   */
  private async readBoardInWorker(
    state: BoardState,
    index: BoardIndex,
    expected: number,
  ): Promise<boolean> {
    if (expected < WORKER_FROM || this.workerReads > 0 || this.workersFailed) return false;
    const read = parallelBoardRead(this.dataSource);
    if (!read) return false;
    const { board } = state;
    const sql = this.sql;
    this.workerReads++;
    try {
      await read(
        {
          whole: sql.wholeBoard,
          before: sql.boardBefore,
          from: sql.boardFrom,
          at: sql.offsetPage,
          params: [board.spaceId, board.sprintId],
          splitParams: (key) => splitParams(board, key),
          offsetParams: (offset) => [board.spaceId, board.sprintId, 1, offset],
        },
        (entries) => {
          const others = entries.others.length > 0 ? new Map(entries.others) : undefined;
          const { addresses, points, reachedAt } = entries;
          for (let i = 0; i < entries.count; i++) {
            const other = others?.get(i);
            if (other !== undefined) index.load(other, points[i], reachedAt[i]);
            else index.loadPacked(addresses, i * 20, points[i], reachedAt[i]);
          }
        },
        {
          expected,
          signal: this.shutdown.signal,
          stillWanted: () => !this.closed && this.boards.get(state.key) === state,
        },
      );
      return true;
    } finally {
      this.workerReads--;
    }
  }

  /**
   * Every entry of a board, in rank order, straight from the driver (see readOrderedRows): from a
   * replica once it has what the primary had now (the feed delivers what commits after), else
   * from the primary.
   */
  private async readBoard(state: BoardState, row: RowSink): Promise<void> {
    const { board } = state;
    const sql = this.sql;
    const replica = this.replicas.enabled ? await this.replicas.connectionAtPrimary() : undefined;
    return readOrderedRows(this.dataSource, {
      query: {
        whole: { sql: sql.wholeBoard, params: [board.spaceId, board.sprintId] },
        first: (limit) => ({
          sql: sql.offsetPage,
          params: [board.spaceId, board.sprintId, limit, 0],
        }),
        after: ([addressKey, points, reachedAt], limit) => ({
          sql: sql.pageAfter,
          params: keysetPageParams(
            board,
            {
              addressKey: String(addressKey),
              points: Number(points),
              reachedAt: Number(reachedAt),
            },
            limit,
          ),
        }),
      },
      row: ([addressKey, points, reachedAt]) =>
        row(String(addressKey), Number(points), Number(reachedAt)),
      stillWanted: () => !this.closed && this.boards.get(state.key) === state,
      chunkRows: LOAD_CHUNK,
      replica,
    });
  }
}

type RowSink = (addressKey: string, points: number, reachedAt: number) => void;

function keyOf(board: BoardRef): string {
  return `${board.spaceId}:${board.sprintId}`;
}
