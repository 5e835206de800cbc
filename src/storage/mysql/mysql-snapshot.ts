import type { DataSource, QueryRunner } from 'typeorm';
import type { ReadSnapshot, SnapshotRow } from '../engine/read-snapshot';

/**
 * REPEATABLE READ with a consistent snapshot, read only, on a pooled connection of its own (InnoDB
 * keeps the undo history the snapshot may read until it ends).
 */
export async function openMysqlSnapshot(dataSource: DataSource): Promise<ReadSnapshot> {
  const runner: QueryRunner = dataSource.createQueryRunner('master');
  try {
    await runner.connect();
    await runner.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await runner.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
  } catch (error) {
    await discard(runner);
    throw error;
  }
  const takenAt = Date.now();
  let open = true;
  return {
    takenAt,
    all: (sql, params) => runner.query(sql, [...params]) as Promise<SnapshotRow[]>,
    async release() {
      if (!open) return;
      open = false;
      try {
        await runner.query('COMMIT');
      } catch (error) {
        await discard(runner);
        throw error;
      }
      await runner.release();
    },
  };
}

/**
 * Closes a pooled connection instead of giving it back: its session may still hold the pending
 * isolation level or the open read-only transaction, which the pool's next user must not inherit.
 */
export async function discard(runner: QueryRunner): Promise<void> {
  const connection = (runner as unknown as { databaseConnection?: { destroy?: () => void } })
    .databaseConnection;
  connection?.destroy?.();
  await runner.release().catch(() => undefined);
}
