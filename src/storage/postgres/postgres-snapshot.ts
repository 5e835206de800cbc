import type { DataSource } from 'typeorm';
import type { ReadSnapshot, SnapshotRow } from '../engine/read-snapshot';
import { driverOf, queryPg } from './pg-statements';

/**
 * A REPEATABLE READ, read-only transaction on a pooled connection of its own: every statement in
 * it sees the database as of its first one, which runs before this returns. PostgreSQL keeps the
 * row versions the snapshot may read until it ends (vacuum waits for it).
 */
export async function openPostgresSnapshot(dataSource: DataSource): Promise<ReadSnapshot> {
  const { master: pool, postgres: pg } = driverOf(dataSource);
  const client = await pool.connect();
  try {
    await client.query({ text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' });
    // The first statement takes the snapshot: BEGIN alone takes none.
    await client.query({ text: 'SELECT 1' });
  } catch (error) {
    // Its session may be half-way into the transaction: not for the pool's next user.
    client.release(true);
    throw error;
  }
  const takenAt = Date.now();
  let open = true;
  return {
    takenAt,
    all: async (sql, params) => (await queryPg(client, pg, sql, params)).rows as SnapshotRow[],
    async release() {
      if (!open) return;
      open = false;
      try {
        await client.query({ text: 'COMMIT' });
      } catch (error) {
        client.release(true);
        throw error;
      }
      client.release();
    },
  };
}
