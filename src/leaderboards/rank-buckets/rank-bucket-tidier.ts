import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import type { BoardRef } from '../ranking/ranking';
import type { RankBucketSql } from './rank-bucket-sql';
import { runAsync, tidy, untidyBuckets } from './rank-buckets';
import { query } from '../../storage/statements';

/** Splits one pass makes at most: it holds the board's writers up meanwhile. */
const SPLITS_PER_PASS = 32;

/**
 * Database servers (MySQL/MariaDB, PostgreSQL): splits and drops a board's rank buckets after a
 * writer's commit, in transactions of its own. Each pass holds the board's counter row, as writers
 * do when they move bucket counts, and reads at READ COMMITTED: the entries it reads are then
 * exactly those the counts describe (a writer of the board that has not moved its counts yet has
 * not committed its entries either). A failed pass is only logged: the counts stay right, the
 * bucket stays large.
 */
export class RankBucketTidier {
  private readonly logger = new Logger('RankBuckets');
  private readonly running = new Map<string, Promise<void>>();
  /** Boards asked for again while a pass ran: it may have read their buckets before the ask. */
  private readonly again = new Set<string>();

  constructor(private readonly sql: RankBucketSql) {}

  /** Tidies the board soon, once at a time per board (once more after a run it asked during). */
  schedule(dataSource: DataSource, board: BoardRef): void {
    const key = `${board.spaceId}/${board.sprintId}`;
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    const run = this.tidyBoard(dataSource, board)
      .catch((error: unknown) =>
        this.logger.warn(
          `Splitting the rank buckets of board ${key} failed: ${(error as Error).message}`,
        ),
      )
      .finally(() => {
        this.running.delete(key);
        if (this.again.delete(key)) this.schedule(dataSource, board);
      });
    this.running.set(key, run);
  }

  /** Resolves once every scheduled pass has ended (for shutdown and specs). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  /** Passes until nothing is left to split (a board made large at once takes several). */
  async tidyBoard(dataSource: DataSource, board: BoardRef): Promise<void> {
    while ((await this.pass(dataSource, board)) >= SPLITS_PER_PASS);
  }

  private async pass(dataSource: DataSource, board: BoardRef): Promise<number> {
    const runner: QueryRunner = dataSource.createQueryRunner('master');
    await runner.connect();
    try {
      await runner.startTransaction('READ COMMITTED');
      const run = (sql: string, params: unknown[]) => query(runner, sql, params);
      const [held] = (await run(
        'SELECT entry_count FROM boards WHERE space_id = ? AND sprint_id = ? FOR UPDATE',
        [board.spaceId, board.sprintId],
      )) as unknown[];
      let splits = 0;
      if (held) {
        const untidy = await runAsync(untidyBuckets(this.sql, board), run);
        splits = await runAsync(tidy(this.sql, board, untidy, SPLITS_PER_PASS), run);
      }
      await runner.commitTransaction();
      return splits;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }
}
