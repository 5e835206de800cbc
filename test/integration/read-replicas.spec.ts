import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { RankIndexService } from '../../src/leaderboards/rank-index/rank-index.service';
import { ReadReplicas } from '../../src/storage/replica/read-replicas';
import { startTestApp, TestApp } from '../utils/test-app';
import type { TestDatabase } from '../utils/test-databases';

/* eslint-disable @typescript-eslint/no-require-imports */
const mariadb = require('../../scripts/scale-out/mariadb') as {
  startMariadbPair(options: { dir: string; log: (line: string) => void }): Promise<Pair>;
  stopMariadb(servers: Pair): Promise<void>;
  replicaCaughtUp(primary: Server, replica: Server): Promise<boolean>;
  query(server: Server, sql: string, params?: unknown[], database?: string): Promise<any>;
  DATABASE: string;
};
/* eslint-enable @typescript-eslint/no-require-imports */

interface Server {
  url: string;
  process: { child: { pid?: number } };
}
interface Pair {
  primary: Server;
  replica: Server;
}

const METRICS_TOKEN = 'replica-metrics-0123456789abcdefghij';
const BOARD = `query($s: Int!) { space(id: $s) { loyaltyPointsRanks {
  totalCount list { rank points address { address } } } } }`;

/**
 * DATABASE_REPLICA_URLS on a real MariaDB primary and GTID replica (private mariadbd processes,
 * as scripts/scale-out.js starts them): pages read with SQL and rank-index loads go to the
 * replica, and an instance never shows a page older than a write it acknowledged.
 */
describe('read replicas (MariaDB primary and GTID replica)', () => {
  let dir: string;
  let pair: Pair;
  let reader: TestApp;
  let writer: TestApp;
  let readerIngest: string;
  let writerIngest: string;
  const onReplica = (sql: string, params?: unknown[]) =>
    mariadb.query(pair.replica, sql, params, mariadb.DATABASE);

  async function caughtUp(): Promise<void> {
    for (const until = Date.now() + 20_000; Date.now() < until; await sleep(50)) {
      if (await mariadb.replicaCaughtUp(pair.primary, pair.replica)) return;
    }
    throw new Error('the replica did not catch up');
  }

  /** Until the instance has seen its replica hold every write it acknowledged. */
  async function readsReplica(app: TestApp): Promise<void> {
    const replicas = app.app.get(ReadReplicas);
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(50)) {
      if (replicas.readsReplica()) return;
    }
    throw new Error('the instance never trusted its replica');
  }

  async function ingest(app: TestApp, token: string, records: unknown[]): Promise<void> {
    const response = await fetch(app.url.replace(/\/query$/, '/ingest'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify(records),
    });
    const body = (await response.json()) as { accepted: number };
    expect(response.status).toBe(200);
    expect(body.accepted).toBe(records.length);
  }

  const points = (spaceId: number, key: string, address: string, amount: number) => ({
    type: 'points',
    key,
    spaceId,
    address,
    points: amount,
    occurredAt: '2026-03-02T00:00:00Z',
  });

  async function board(app: TestApp, spaceId: number) {
    const page = await app.gql(BOARD, { s: spaceId });
    expect(page.body.errors).toBeUndefined();
    const ranks = page.body.data.space.loyaltyPointsRanks;
    return {
      totalCount: ranks.totalCount as number,
      rows: (
        ranks.list as Array<{ rank: number; points: number; address: { address: string } }>
      ).map((e) => `${e.rank}:${e.address.address.toLowerCase()}:${e.points}`),
    };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'loyalty-replicas-'));
    pair = await mariadb.startMariadbPair({ dir, log: () => undefined });
    const primary: TestDatabase = { kind: 'mariadb', url: pair.primary.url, drop: async () => {} };
    // The writer: another instance on the same primary, without replicas.
    writer = await startTestApp('mariadb', {}, primary);
    // The reader: pages from SQL only (no rank index), so every page read is a replica read.
    reader = await startTestApp(
      'mariadb',
      {
        DATABASE_REPLICA_URLS: pair.replica.url,
        RANK_INDEX_MAX_ENTRIES: '0',
        RESPONSE_CACHE_MS: '0',
        METRICS_TOKEN,
      },
      primary,
    );
    readerIngest = (await reader.app.get(AccessTokensService).create('r', ['ingest'])).token;
    writerIngest = (await writer.app.get(AccessTokensService).create('w', ['ingest'])).token;
    await writer.load([
      { type: 'space', id: 1, name: 'Replicated' },
      { type: 'space', id: 2, name: 'Indexed' },
    ]);
    await ingest(writer, writerIngest, [points(1, 'a1', '0xA1', 10), points(1, 'b1', '0xB1', 20)]);
    await caughtUp();
  }, 120_000);

  afterAll(async () => {
    await reader?.close();
    await writer?.close();
    if (pair) await mariadb.stopMariadb(pair);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('reads pages from the replica: a write the replica has not applied is not shown', async () => {
    await readsReplica(reader);
    const scraped = await fetch(reader.url.replace(/\/query$/, '/metrics'), {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const lag = /^loyalty_replica_lag_seconds\{replica="127\.0\.0\.1:\d+"\} (\S+)$/m.exec(
      await scraped.text(),
    );
    expect(Number(lag?.[1])).toBeLessThan(5);
    expect(await board(reader, 1)).toEqual({ totalCount: 2, rows: ['1:0xb1:20', '2:0xa1:10'] });
    await onReplica('STOP SLAVE SQL_THREAD');
    try {
      // Written through the other instance: on the primary, not yet on the replica.
      await ingest(writer, writerIngest, [points(1, 'c1', '0xC1', 30)]);
      expect(await board(writer, 1)).toMatchObject({ totalCount: 3 });
      expect(await board(reader, 1)).toEqual({ totalCount: 2, rows: ['1:0xb1:20', '2:0xa1:10'] });
    } finally {
      await onReplica('START SLAVE SQL_THREAD');
    }
    await caughtUp();
    expect(await board(reader, 1)).toEqual({
      totalCount: 3,
      rows: ['1:0xc1:30', '2:0xb1:20', '3:0xa1:10'],
    });
  });

  it('never shows a page older than a write the instance acknowledged', async () => {
    await onReplica('STOP SLAVE SQL_THREAD');
    try {
      await ingest(reader, readerIngest, [points(1, 'd1', '0xD1', 40)]);
      // The replica lacks it, so the reader reads the primary.
      expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
      const [{ onReplicaOnly }] = await onReplica(
        "SELECT COUNT(*) AS onReplicaOnly FROM board_entries WHERE address_key = '0xd1'",
      );
      expect(Number(onReplicaOnly)).toBe(0);
    } finally {
      await onReplica('START SLAVE SQL_THREAD');
    }
    await caughtUp();
    expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
    // Caught up: back on the replica (a write it has not applied is again not shown).
    await readsReplica(reader);
    await onReplica('STOP SLAVE SQL_THREAD');
    try {
      await ingest(writer, writerIngest, [points(1, 'e1', '0xE1', 50)]);
      expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
    } finally {
      await onReplica('START SLAVE SQL_THREAD');
    }
    await caughtUp();
  });

  it('loads a rank index from the replica once it has what the primary had', async () => {
    const indexed = await startTestApp(
      'mariadb',
      { DATABASE_REPLICA_URLS: pair.replica.url, RESPONSE_CACHE_MS: '0' },
      { kind: 'mariadb', url: pair.primary.url, drop: async () => {} },
    );
    try {
      await ingest(writer, writerIngest, [points(2, 'x2', '0xF2', 5), points(2, 'y2', '0xF3', 6)]);
      await caughtUp();
      // A value only the replica holds: a rank index showing it was loaded from the replica.
      await onReplica(
        "UPDATE board_entries SET points = 7 WHERE space_id = 2 AND address_key = '0xf2'",
      );
      await board(indexed, 2); // starts the load
      const indexes = indexed.app.get(RankIndexService);
      for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
        if (indexes.stats().boards.length > 0) break;
      }
      const held = indexes.stats().boards;
      expect(held).toEqual([expect.objectContaining({ spaceId: 2, sprintId: 0, entries: 2 })]);
      // Now served by the index.
      let rows = (await board(indexed, 2)).rows;
      expect(rows).toEqual(['1:0xf2:7', '2:0xf3:6']);
      // A later write through the primary reaches the index through the change feed.
      await ingest(writer, writerIngest, [points(2, 'z2', '0xF4', 9)]);
      for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
        rows = (await board(indexed, 2)).rows;
        if (rows.length === 3) break;
      }
      expect(rows).toEqual(['1:0xf4:9', '2:0xf2:7', '3:0xf3:6']);
    } finally {
      await onReplica(
        "UPDATE board_entries SET points = 5 WHERE space_id = 2 AND address_key = '0xf2'",
      );
      await indexed.close();
    }
  });

  it('reads the primary while the replica hangs, and the replica again once it answers', async () => {
    await readsReplica(reader);
    const pid = pair.replica.process.child.pid!;
    process.kill(pid, 'SIGSTOP'); // a replica that neither answers nor resets: a dead host
    try {
      await ingest(writer, writerIngest, [points(1, 'f1', '0xF1', 60)]);
      // The first read waits out the replica's 3 s timeout, then reads the primary.
      expect((await board(reader, 1)).rows[0]).toBe('1:0xf1:60');
      expect(reader.app.get(ReadReplicas).readsReplica()).toBe(false);
      expect((await board(reader, 1)).rows[0]).toBe('1:0xf1:60');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await caughtUp();
    await readsReplica(reader);
  });
});
