import type { DataSource } from 'typeorm';
import type { ParallelBoardRead } from './engine/parallel-board-read';
import { engineOf } from './engines';

export type {
  BoardKey,
  BoardReadOptions,
  BoardStatements,
  PackedEntries,
  ParallelBoardRead,
} from './engine/parallel-board-read';

/**
 * A whole-board read in worker threads, where the database offers one for this data source (a
 * SQLite file: workers open it read-only beside the writer); undefined elsewhere, where the board
 * is read on a connection (see readOrderedRows).
 */
export function parallelBoardRead(dataSource: DataSource): ParallelBoardRead | undefined {
  return engineOf(dataSource).parallelBoardRead?.(dataSource);
}
