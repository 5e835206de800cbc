import { Inject, Injectable } from '@nestjs/common';
import type { BoardCsvRow } from '../common/csv';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { LoyaltyModuleOptions } from '../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../options/loyalty.module-definition';
import type { SpaceReader } from '../spaces/space-reader';
import { SpacesService } from '../spaces/spaces.service';
import { num, SqlDialect } from '../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../storage/sql-dialect.provider';
import { ReadSnapshot, ReadSnapshots, SnapshotRow } from '../storage/snapshot/read-snapshot';
import { BoardTotalsStore } from '../leaderboards/ledger/board-totals.store';
import { ALL_TIME_SPRINT_ID, BoardRef, RankKey } from '../leaderboards/ranking/ranking';
import { BoardSql, boardSql, keysetPageParams } from '../leaderboards/read/board-sql';

export const DEFAULT_EXPORT_MAX_CONCURRENT = 2;
/** Entries read per statement: large enough that round trips do not dominate, small in memory. */
const EXPORT_PAGE_SIZE = 1000;
/** When a refused export may try again: about what an export of a large board takes. */
const EXPORT_RETRY_AFTER_SECONDS = 5;
/** Snapshots opened in a row that another process's writes left unsettled, before giving up. */
const SETTLE_ATTEMPTS = 3;

/** One board as of one moment, read from a snapshot that stays open until it is read or closed. */
export interface BoardExport {
  board: BoardRef;
  /** The moment of the snapshot. */
  asOf: Date;
  /** Entries on the board at that moment: {@link pages} yields exactly these, ranks 1..entries. */
  entries: number;
  /** The entries in rank order, a page at a time; the snapshot closes when they end or stop. */
  pages(): AsyncGenerator<BoardCsvRow[]>;
  /** Closes the snapshot without reading (safe after {@link pages} ended too). */
  close(): Promise<void>;
}

/**
 * Whole boards as of one moment (GET /export): every address once, ranks 1..N, from one read
 * snapshot, so writers go on meanwhile and nothing they commit is half seen. At most
 * `boardExport.maxConcurrent` run at once in a process (each holds a database connection), and
 * memory is one page whatever the board's size.
 */
@Injectable()
export class BoardExportService {
  private readonly sql: BoardSql;
  private readonly maxConcurrent: number;
  private running = 0;

  constructor(
    private readonly spaces: SpacesService,
    private readonly snapshots: ReadSnapshots,
    private readonly totals: BoardTotalsStore,
    @InjectSqlDialect() dialect: SqlDialect,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.sql = boardSql(dialect);
    this.maxConcurrent = options.boardExport?.maxConcurrent ?? DEFAULT_EXPORT_MAX_CONCURRENT;
  }

  /** Exports running in this process now. */
  get inProgress(): number {
    return this.running;
  }

  /**
   * Opens the export of a space's all-time board (`sprintId` null) or of one sprint's: `Space not
   * found` (also for a private space `reader` may not read; without a reader, as an operator's
   * command line, every space) and `Invalid sprint ID` as on /query; SERVICE_UNAVAILABLE while the
   * process runs its most exports.
   */
  async open(
    spaceId: number,
    sprintId: number | null,
    reader?: SpaceReader | null,
  ): Promise<BoardExport> {
    await this.spaces.requireSpace(spaceId, reader);
    if (sprintId !== null) await this.spaces.requireSprint(spaceId, sprintId);
    const board: BoardRef = { spaceId, sprintId: sprintId ?? ALL_TIME_SPRINT_ID };
    if (this.running >= this.maxConcurrent)
      throw new LoyaltyException(
        ErrorCode.SERVICE_UNAVAILABLE,
        `${this.running} board exports are running: retry shortly`,
        EXPORT_RETRY_AFTER_SECONDS,
      );
    this.running++;
    let snapshot: ReadSnapshot | undefined;
    try {
      const settled = await this.settledSnapshot(board);
      snapshot = settled.snapshot;
      // The first page is read here, so that a failure to read is a refusal, before any body.
      const first = await snapshot.all(this.sql.exportFirst, [
        spaceId,
        board.sprintId,
        EXPORT_PAGE_SIZE,
      ]);
      return this.exportOf(board, snapshot, settled.entries, first);
    } catch (error) {
      await snapshot?.release().catch(() => undefined);
      this.running--;
      throw error;
    }
  }

  /**
   * A snapshot in which board_entries holds all of the board's changes, with the board's entry
   * count as of it (the ledger keeps it in the same transactions as the entries).
   */
  private async settledSnapshot(
    board: BoardRef,
  ): Promise<{ snapshot: ReadSnapshot; entries: number }> {
    for (let attempt = 1; ; attempt++) {
      const snapshot = await this.totals.settledSnapshot(board, () => this.snapshots.open());
      const [state] = await snapshot
        .all(this.sql.boardState, [board.spaceId, board.sprintId])
        .catch(async (error: unknown) => {
          await snapshot.release().catch(() => undefined);
          throw error;
        });
      // A board never written has no row: no entries.
      if (!state) return { snapshot, entries: 0 };
      if (state.unfoldedSince === null) return { snapshot, entries: num(state.entryCount) };
      // Another process wrote the board between the fold and the snapshot.
      await snapshot.release();
      if (attempt === SETTLE_ATTEMPTS)
        throw new LoyaltyException(
          ErrorCode.SERVICE_UNAVAILABLE,
          'The board is being written too fast to export: retry shortly',
          EXPORT_RETRY_AFTER_SECONDS,
        );
    }
  }

  private exportOf(
    board: BoardRef,
    snapshot: ReadSnapshot,
    entries: number,
    first: SnapshotRow[],
  ): BoardExport {
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      this.running--;
      await snapshot.release();
    };
    const sql = this.sql;
    return {
      board,
      asOf: new Date(snapshot.takenAt),
      entries,
      close,
      async *pages() {
        try {
          let rank = 0;
          let rows = first;
          while (rows.length > 0) {
            yield rows.map((row) => toRow(row, ++rank));
            if (rows.length < EXPORT_PAGE_SIZE) break;
            const last = rankKeyOf(rows[rows.length - 1]);
            rows = await snapshot.all(
              sql.exportAfter,
              keysetPageParams(board, last, EXPORT_PAGE_SIZE),
            );
          }
          // The count and the rows come from one snapshot: they can only differ if the count is
          // wrong, and then the answer must not pass for whole (the caller cuts the connection).
          if (rank !== entries)
            throw new Error(`The board held ${rank} entries, not the ${entries} its count says`);
        } finally {
          await close();
        }
      },
    };
  }
}

function rankKeyOf(row: SnapshotRow): RankKey {
  return {
    points: num(row.points),
    reachedAt: num(row.reachedAt),
    addressKey: String(row.addressKey),
  };
}

function toRow(row: SnapshotRow, rank: number): BoardCsvRow {
  return {
    rank,
    // An address with points has a profile row; the key stands in should one be missing.
    address: typeof row.address === 'string' ? row.address : String(row.addressKey),
    username: typeof row.username === 'string' ? row.username : null,
    points: num(row.points),
  };
}
