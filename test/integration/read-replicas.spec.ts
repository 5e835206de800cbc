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
const postgres = require('../../scripts/scale-out/postgres') as {
  startPostgresPair(options: { dir: string; log: (line: string) => void }): Promise<Pair>;
  stopPostgres(servers: Pair): Promise<void>;
  replicaCaughtUp(primary: Server, replica: Server): Promise<boolean>;
  pauseReplay(replica: Server): Promise<void>;
  resumeReplay(replica: Server): Promise<void>;
  signalServer(server: Server, signal: NodeJS.Signals): void;
  query(server: Server, sql: string, params?: unknown[], database?: string): Promise<any>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

interface Server {
  url: string;
  port: number;
  process: { child: { pid?: number } };
}
interface Pair {
  primary: Server;
  replica: Server;
}

/** A primary and its replica of one kind, and how a spec holds the replica back. */
interface Replication {
  kind: 'mariadb' | 'postgres';
  title: string;
  start(dir: string): Promise<Pair>;
  stop(pair: Pair): Promise<void>;
  caughtUp(pair: Pair): Promise<boolean>;
  /** A statement on the replica's copy of the service's database. */
  onReplica(pair: Pair, sql: string): Promise<any[]>;
  /** The replica keeps answering but applies nothing more of the primary's until resumed. */
  pause(pair: Pair): Promise<void>;
  resume(pair: Pair): Promise<void>;
  /** The replica neither answers nor resets connections (a dead host) until woken. */
  hang(pair: Pair): void;
  wake(pair: Pair): void;
  /** The replica's URL asking for TLS, where the kind's URLs can ask (PostgreSQL's sslmode). */
  tlsUrl?: (url: string) => string;
}

const MARIADB: Replication = {
  kind: 'mariadb',
  title: 'MariaDB primary and GTID replica',
  start: (dir) => mariadb.startMariadbPair({ dir, log: () => undefined }),
  stop: (pair) => mariadb.stopMariadb(pair),
  caughtUp: ({ primary, replica }) => mariadb.replicaCaughtUp(primary, replica),
  onReplica: ({ replica }, sql) => mariadb.query(replica, sql, [], mariadb.DATABASE),
  pause: ({ replica }) => mariadb.query(replica, 'STOP SLAVE SQL_THREAD'),
  resume: ({ replica }) => mariadb.query(replica, 'START SLAVE SQL_THREAD'),
  // mariadbd is one process: stopping it stops every connection's thread too.
  hang: ({ replica }) => process.kill(replica.process.child.pid!, 'SIGSTOP'),
  wake: ({ replica }) => process.kill(replica.process.child.pid!, 'SIGCONT'),
};

const POSTGRES: Replication = {
  kind: 'postgres',
  title: 'PostgreSQL primary and streaming hot standby',
  start: (dir) => postgres.startPostgresPair({ dir, log: () => undefined }),
  stop: (pair) => postgres.stopPostgres(pair),
  caughtUp: ({ primary, replica }) => postgres.replicaCaughtUp(primary, replica),
  onReplica: ({ replica }, sql) => postgres.query(replica, sql),
  pause: ({ replica }) => postgres.pauseReplay(replica),
  resume: ({ replica }) => postgres.resumeReplay(replica),
  // Each connection is a process of the postmaster's: all of them stop, open connections too.
  hang: ({ replica }) => postgres.signalServer(replica, 'SIGSTOP'),
  wake: ({ replica }) => postgres.signalServer(replica, 'SIGCONT'),
  tlsUrl: (url) => {
    const withTls = new URL(url);
    withTls.searchParams.set('sslmode', 'require');
    return withTls.toString();
  },
};

/** What a kind's own rank-index spec gets of its describe, once beforeAll has run. */
interface Setup {
  replication: Replication;
  pair: Pair;
  primary: TestDatabase;
  writer: TestApp;
  writerIngest: string;
  caughtUp(): Promise<void>;
}

const METRICS_TOKEN = 'replica-metrics-0123456789abcdefghij';
const BOARD = `query($s: Int!) { space(id: $s) { loyaltyPointsRanks {
  totalCount list { rank points address { address } } } } }`;

async function caughtUp(replication: Replication, pair: Pair): Promise<void> {
  for (const until = Date.now() + 20_000; Date.now() < until; await sleep(50)) {
    if (await replication.caughtUp(pair)) return;
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
    rows: (ranks.list as Array<{ rank: number; points: number; address: { address: string } }>).map(
      (e) => `${e.rank}:${e.address.address.toLowerCase()}:${e.points}`,
    ),
  };
}

/** The boards the instance's rank index holds, once it holds any (10 s at most). */
async function indexedBoards(app: TestApp) {
  const indexes = app.app.get(RankIndexService);
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
    if (indexes.stats().boards.length > 0) break;
  }
  return indexes.stats().boards;
}

/** The board's rows once it has `count` of them (10 s at most). */
async function boardOf(app: TestApp, spaceId: number, count: number): Promise<string[]> {
  let rows: string[] = [];
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
    rows = (await board(app, spaceId)).rows;
    if (rows.length === count) break;
  }
  return rows;
}

/**
 * DATABASE_REPLICA_URLS on a real primary and replica (private server processes, as
 * scripts/scale-out.js starts them): pages read with SQL and rank-index loads go to the replica,
 * and an instance never shows a page older than a write it acknowledged.
 */
function describeReplicas(
  replication: Replication,
  loadsRankIndexFromReplica: (setup: Setup) => Promise<void>,
): void {
  describe(`read replicas (${replication.title})`, () => {
    let dir: string;
    let pair: Pair;
    let primary: TestDatabase;
    let reader: TestApp;
    let writer: TestApp;
    let readerIngest: string;
    let writerIngest: string;
    const onReplica = (sql: string) => replication.onReplica(pair, sql);
    const replicaCaughtUp = () => caughtUp(replication, pair);

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'loyalty-replicas-'));
      pair = await replication.start(dir);
      primary = { kind: replication.kind, url: pair.primary.url, drop: async () => {} };
      // The writer: another instance on the same primary, without replicas.
      writer = await startTestApp(replication.kind, {}, primary);
      // The reader: pages from SQL only (no rank index), so every page read is a replica read.
      reader = await startTestApp(
        replication.kind,
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
      await ingest(writer, writerIngest, [
        points(1, 'a1', '0xA1', 10),
        points(1, 'b1', '0xB1', 20),
      ]);
      await replicaCaughtUp();
    }, 120_000);

    afterAll(async () => {
      await reader?.close();
      await writer?.close();
      if (pair) await replication.stop(pair);
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
      await replication.pause(pair);
      try {
        // Written through the other instance: on the primary, not yet on the replica.
        await ingest(writer, writerIngest, [points(1, 'c1', '0xC1', 30)]);
        expect(await board(writer, 1)).toMatchObject({ totalCount: 3 });
        expect(await board(reader, 1)).toEqual({
          totalCount: 2,
          rows: ['1:0xb1:20', '2:0xa1:10'],
        });
      } finally {
        await replication.resume(pair);
      }
      await replicaCaughtUp();
      expect(await board(reader, 1)).toEqual({
        totalCount: 3,
        rows: ['1:0xc1:30', '2:0xb1:20', '3:0xa1:10'],
      });
    });

    it('never shows a page older than a write the instance acknowledged', async () => {
      await replication.pause(pair);
      try {
        await ingest(reader, readerIngest, [points(1, 'd1', '0xD1', 40)]);
        // The replica lacks it, so the reader reads the primary.
        expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
        const [{ replicated }] = await onReplica(
          "SELECT COUNT(*) AS replicated FROM board_entries WHERE address_key = '0xd1'",
        );
        expect(Number(replicated)).toBe(0);
      } finally {
        await replication.resume(pair);
      }
      await replicaCaughtUp();
      expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
      // Caught up: back on the replica (a write it has not applied is again not shown).
      await readsReplica(reader);
      await replication.pause(pair);
      try {
        await ingest(writer, writerIngest, [points(1, 'e1', '0xE1', 50)]);
        expect((await board(reader, 1)).rows[0]).toBe('1:0xd1:40');
      } finally {
        await replication.resume(pair);
      }
      await replicaCaughtUp();
    });

    it('loads a rank index from the replica once it has what the primary had', () =>
      loadsRankIndexFromReplica({
        replication,
        pair,
        primary,
        writer,
        writerIngest,
        caughtUp: replicaCaughtUp,
      }));

    const { tlsUrl } = replication;
    if (tlsUrl)
      it('reaches the replica as its URL says: asked for TLS, a server without it is not read', async () => {
        // The private servers run without TLS: a reader that takes the URL's sslmode cannot
        // connect, and reads the primary.
        await replicaCaughtUp();
        const tls = await startTestApp(
          replication.kind,
          {
            DATABASE_REPLICA_URLS: tlsUrl(pair.replica.url),
            RANK_INDEX_MAX_ENTRIES: '0',
            RESPONSE_CACHE_MS: '0',
          },
          primary,
        );
        try {
          await sleep(1_500);
          const replicas = tls.app.get(ReadReplicas);
          expect(replicas.readsReplica()).toBe(false);
          expect(replicas.lags()).toEqual([{ name: expect.any(String), lagMs: undefined }]);
          expect(await board(tls, 1)).toEqual(await board(writer, 1));
        } finally {
          await tls.close();
        }
      });

    it('reads the primary while the replica hangs, and the replica again once it answers', async () => {
      await readsReplica(reader);
      replication.hang(pair);
      try {
        await ingest(writer, writerIngest, [points(1, 'f1', '0xF1', 60)]);
        // The first read waits out the replica's 3 s timeout, then reads the primary.
        expect((await board(reader, 1)).rows[0]).toBe('1:0xf1:60');
        expect(reader.app.get(ReadReplicas).readsReplica()).toBe(false);
        expect((await board(reader, 1)).rows[0]).toBe('1:0xf1:60');
      } finally {
        replication.wake(pair);
      }
      await replicaCaughtUp();
      await readsReplica(reader);
    });
  });
}

/** A value only the replica holds: a rank index showing it was loaded from the replica. */
async function loadsRankIndexWithReplicaOnlyValue(setup: Setup): Promise<void> {
  const { replication, pair, writer, writerIngest } = setup;
  const indexed = await startTestApp(
    replication.kind,
    { DATABASE_REPLICA_URLS: pair.replica.url, RESPONSE_CACHE_MS: '0' },
    setup.primary,
  );
  try {
    await ingest(writer, writerIngest, [points(2, 'x2', '0xF2', 5), points(2, 'y2', '0xF3', 6)]);
    await setup.caughtUp();
    await replication.onReplica(
      pair,
      "UPDATE board_entries SET points = 7 WHERE space_id = 2 AND address_key = '0xf2'",
    );
    await board(indexed, 2); // starts the load
    expect(await indexedBoards(indexed)).toEqual([
      expect.objectContaining({ spaceId: 2, sprintId: 0, entries: 2 }),
    ]);
    // Now served by the index.
    expect((await board(indexed, 2)).rows).toEqual(['1:0xf2:7', '2:0xf3:6']);
    // A later write through the primary reaches the index through the change feed.
    await ingest(writer, writerIngest, [points(2, 'z2', '0xF4', 9)]);
    expect(await boardOf(indexed, 2, 3)).toEqual(['1:0xf4:9', '2:0xf2:7', '3:0xf3:6']);
  } finally {
    await replication.onReplica(
      pair,
      "UPDATE board_entries SET points = 5 WHERE space_id = 2 AND address_key = '0xf2'",
    );
    await indexed.close();
  }
}

/** The part of node-postgres's client the spec reads: the lent connection is one. */
interface PgClient {
  query(config: string | { text: string }, ...rest: unknown[]): Promise<{ rows: any[] }>;
}

/** A replica connection ReadReplicas lent to a rank-index load, as the spec saw it. */
interface Loan {
  settled: boolean;
  /** What the lent connection's server said it is, asked before the load used it. */
  server?: { standby: boolean; port: number };
  /** The statements the load ran on the connection until it gave it back. */
  statements?: string[];
  failed?: boolean;
}

/**
 * A standby is read-only, so no value can be planted on it alone. Instead: the load waits while
 * the standby lacks a write the primary had (its replay paused), then gets a connection that
 * answers it is the standby, runs its cursor on it, and holds that write.
 */
async function loadsRankIndexFromStandby(setup: Setup): Promise<void> {
  const { replication, pair, writer, writerIngest } = setup;
  const indexed = await startTestApp(
    replication.kind,
    { DATABASE_REPLICA_URLS: pair.replica.url, RESPONSE_CACHE_MS: '0' },
    setup.primary,
  );
  const replicas = indexed.app.get(ReadReplicas);
  const connectionAtPrimary = replicas.connectionAtPrimary.bind(replicas);
  const loans: Loan[] = [];
  const lending = jest.spyOn(replicas, 'connectionAtPrimary').mockImplementation(async () => {
    const loan: Loan = { settled: false };
    loans.push(loan);
    const lent = await connectionAtPrimary();
    loan.settled = true;
    if (!lent) return undefined;
    const client = lent.connection as PgClient;
    const { rows } = await client.query(
      'SELECT pg_is_in_recovery() AS standby, inet_server_port() AS port',
    );
    loan.server = rows[0];
    const statements = jest.spyOn(client, 'query');
    return {
      connection: client,
      done: (failed = false) => {
        loan.failed = failed;
        loan.statements = statements.mock.calls.map(([config]) =>
          typeof config === 'string' ? config : config.text,
        );
        statements.mockRestore();
        lent.done(failed);
      },
    };
  });
  try {
    await ingest(writer, writerIngest, [points(2, 'x2', '0xF2', 5), points(2, 'y2', '0xF3', 6)]);
    await setup.caughtUp();
    await replication.pause(pair);
    try {
      await ingest(writer, writerIngest, [points(2, 'z2', '0xF4', 9)]);
      await board(indexed, 2); // starts the load
      for (const until = Date.now() + 5_000; loans.length === 0 && Date.now() < until;)
        await sleep(20);
      expect(loans).toEqual([{ settled: false }]);
      // Still waiting: the standby has not replayed z2 (the load gives up after 5 s).
      await sleep(500);
      expect(loans).toEqual([{ settled: false }]);
    } finally {
      await replication.resume(pair);
    }
    expect(await indexedBoards(indexed)).toEqual([
      expect.objectContaining({ spaceId: 2, sprintId: 0, entries: 3 }),
    ]);
    expect(loans).toEqual([
      {
        settled: true,
        server: { standby: true, port: pair.replica.port },
        statements: expect.arrayContaining([
          expect.stringMatching(
            /^DECLARE ordered_rows NO SCROLL CURSOR FOR SELECT .* FROM board_entries/s,
          ),
          expect.stringMatching(/^FETCH FORWARD \d+ FROM ordered_rows$/),
        ]),
        failed: false,
      },
    ]);
    expect((await board(indexed, 2)).rows).toEqual(['1:0xf4:9', '2:0xf3:6', '3:0xf2:5']);
    // A later write through the primary reaches the index through the change feed, not a reload.
    await ingest(writer, writerIngest, [points(2, 'w2', '0xF5', 11)]);
    expect(await boardOf(indexed, 2, 4)).toEqual(['1:0xf5:11', '2:0xf4:9', '3:0xf3:6', '4:0xf2:5']);
    expect(indexed.app.get(RankIndexService).stats().boards).toEqual([
      expect.objectContaining({ spaceId: 2, sprintId: 0, entries: 4 }),
    ]);
    expect(lending).toHaveBeenCalledTimes(1);
  } finally {
    lending.mockRestore();
    await indexed.close();
  }
}

describeReplicas(MARIADB, loadsRankIndexWithReplicaOnlyValue);
describeReplicas(POSTGRES, loadsRankIndexFromStandby);
