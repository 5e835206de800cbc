import type { DataSource } from 'typeorm';
import type {
  ReplicaDriver,
  ReplicaEndpoint,
  ReplicaPool,
  ReplicaPoolLimits,
} from '../engine/replicas';
import { onPooledClient, PgModule, queryPg, runPostgres } from './pg-statements';
import { sslOf } from './postgres-connection';

/**
 * PostgreSQL streaming replicas (hot standbys), followed by WAL location: the primary's insert
 * location (pg_current_wal_insert_lsn: past every commit made before it, even one not yet flushed
 * under synchronous_commit = off), and whether a standby has replayed up to it
 * (pg_last_wal_replay_lsn). A server that is not a standby replays nothing and is never read.
 */
export const POSTGRES_REPLICAS: ReplicaDriver = {
  pool: (endpoint, limits) => postgresReplicaPool(endpoint, limits),
  primaryPosition: async (primary: DataSource) => {
    const { rows } = await runPostgres(
      primary,
      `SELECT CAST(pg_current_wal_insert_lsn() AS text) AS position,
         CAST(current_setting('wal_block_size') AS bigint) AS page,
         CAST(pg_size_bytes(current_setting('wal_segment_size')) AS bigint) AS segment`,
      [],
    );
    const row = rows[0] as { position?: string; page: number; segment: number } | undefined;
    return row?.position ? lastRecordEnd(row.position, row.page, row.segment) : '';
  },
  reached: async (replica, position) => {
    const [row] = await replica.query<{ reached: boolean | null }>(
      'SELECT pg_last_wal_replay_lsn() >= CAST(? AS pg_lsn) AS reached',
      [position],
    );
    return row?.reached === true;
  },
  noPosition: 'The primary has no WAL location to compare replicas with: replicas are not read',
};

/**
 * Where the last WAL record ends, given the insert location: when that lies just past a page's
 * header (a record ended on the page boundary), the boundary, which is where a standby's replay
 * stops; it would otherwise never reach the location until the primary writes again.
 */
export function lastRecordEnd(position: string, page: number, segment: number): string {
  const [high, low] = position.split('/').map((part) => BigInt(`0x${part}`));
  const lsn = (high << 32n) | low;
  // A short page header, or the long one that opens a segment.
  const header = lsn % BigInt(segment) === 40n ? 40n : lsn % BigInt(page) === 24n ? 24n : 0n;
  const end = lsn - header;
  return `${(end >> 32n).toString(16).toUpperCase()}/${(end & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The host's pg module, which TypeORM loads too. */
function pgModule(): PgModule {
  // pg is an optional peer: loaded only by a host that has PostgreSQL replicas.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('pg') as PgModule;
}

function postgresReplicaPool(endpoint: ReplicaEndpoint, limits: ReplicaPoolLimits): ReplicaPool {
  const pg = pgModule();
  const port = endpoint.port ?? 5432;
  const pool = new pg.Pool({
    host: endpoint.host,
    port,
    user: endpoint.user,
    password: endpoint.password,
    database: endpoint.database,
    ssl: sslOf(endpoint.tls),
    max: limits.size,
    connectionTimeoutMillis: limits.timeoutMs,
    application_name: 'loyalty-leaderboard replica reads',
  });
  // An error of an idle client is emitted on the pool: unheard, it would end the process.
  pool.on('error', () => undefined);
  const full = () => pool.waitingCount >= limits.queueLimit;
  return {
    name: `${endpoint.host}:${port}`,
    query: async <T>(sql: string, params: readonly unknown[]) => {
      if (full()) throw new Error('the replica pool has too many reads waiting');
      const { rows } = await onPooledClient(pool, (client) =>
        queryPg(client, pg, sql, params, { timeoutMs: limits.timeoutMs }),
      );
      return rows as T[];
    },
    connection: async () => {
      if (full()) throw new Error('the replica pool has too many reads waiting');
      const client = await pool.connect();
      return { connection: client, done: (failed = false) => client.release(failed) };
    },
    end: () => pool.end(),
  };
}
