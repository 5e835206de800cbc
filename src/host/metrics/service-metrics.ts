import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { LoyaltyObserver } from '../../options/loyalty-module-options.interface';
import type { BoardChangeFeed } from '../../leaderboards/changes/board-change-feed';
import type { RankIndexService } from '../../leaderboards/rank-index/rank-index.service';
import { poolStatsOf } from '../../storage/connection/pool-stats';
import type { ReplicaLag } from '../../storage/replica/read-replicas';
import { operationOf } from '../http/request-labels';

/** Latency buckets, in seconds: a cached page is under a millisecond, an export minutes. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LOAD_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** What the gauges read when Prometheus scrapes: the live services, asked then, never polled. */
export interface MetricSources {
  rankIndex: RankIndexService;
  feed: BoardChangeFeed;
  dataSource: DataSource;
  /** Board changes not yet folded into board_entries (SQLite's backlog); absent elsewhere. */
  backlogEntries?: () => number;
  /** Read replicas' lag (DATABASE_REPLICA_URLS); absent without replicas. */
  replicaLags?: () => ReplicaLag[];
}

/**
 * The service's Prometheus metrics (docs/operations.md, Metrics), in a registry of its own so that
 * two apps in one process, or a host's own default registry, never collide. Counters move on the
 * request path (one hook per answer, see {@link observe}); gauges are read at scrape time.
 */
export class ServiceMetrics implements LoyaltyObserver {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'loyalty_http_requests_total',
    help: 'HTTP requests answered, by route, method, GraphQL operation (its root fields) and status',
    labelNames: ['route', 'method', 'operation', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'loyalty_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, by route and operation',
    labelNames: ['route', 'method', 'operation'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'loyalty_rate_limited_total',
    help: 'Requests refused by a rate limit (HTTP 429), by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly records = new Counter({
    name: 'loyalty_ingested_records_total',
    help: 'Records POST /ingest answered for, by outcome (accepted, duplicate, refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly indexLoads = new Histogram({
    name: 'loyalty_rank_index_load_seconds',
    help: 'Time to load a board into its rank index',
    buckets: LOAD_BUCKETS,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Starts the gauges that read the running services (once the app exists). */
  watch(sources: MetricSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'loyalty_rank_index_boards',
      help: 'Boards held in this instance rank indexes',
      registers,
      collect() {
        this.set(sources.rankIndex.stats().boards.length);
      },
    });
    new Gauge({
      name: 'loyalty_rank_index_entries',
      help: 'Entries held in this instance rank indexes, across boards',
      registers,
      collect() {
        this.set(sources.rankIndex.stats().entries);
      },
    });
    new Gauge({
      name: 'loyalty_rank_index_max_entries',
      help: 'RANK_INDEX_MAX_ENTRIES: the entries the rank indexes may hold',
      registers,
      collect() {
        this.set(sources.rankIndex.maxEntries);
      },
    });
    new Gauge({
      name: 'loyalty_rank_index_bytes',
      help: 'Estimated memory of this instance rank indexes, in bytes',
      registers,
      collect() {
        this.set(sources.rankIndex.stats().bytes);
      },
    });
    new Gauge({
      name: 'loyalty_change_feed_lag_seconds',
      help: 'Age of the newest board changes this instance has applied (0 before the feed runs)',
      registers,
      collect() {
        const asOf = sources.feed.appliedAsOf;
        this.set(asOf === undefined ? 0 : Math.max(0, Date.now() - asOf) / 1000);
      },
    });
    new Gauge({
      name: 'loyalty_db_pool_connections',
      help: 'MySQL/MariaDB pool connections, by state (busy, idle, limit)',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const pool = poolStatsOf(sources.dataSource);
        if (!pool) return;
        this.set({ state: 'busy' }, pool.open - pool.idle);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'limit' }, pool.limit);
      },
    });
    new Gauge({
      name: 'loyalty_db_pool_waiting',
      help: 'Requests waiting for a MySQL/MariaDB pool connection',
      registers,
      collect() {
        const pool = poolStatsOf(sources.dataSource);
        if (pool) this.set(pool.waiting);
      },
    });
    const replicaLags = sources.replicaLags;
    if (replicaLags) {
      new Gauge({
        name: 'loyalty_replica_lag_seconds',
        help: 'How far a read replica is behind the primary (absent while unknown: it is not read)',
        labelNames: ['replica'] as const,
        registers,
        collect() {
          this.reset();
          for (const { name, lagMs } of replicaLags()) {
            if (lagMs !== undefined) this.set({ replica: name }, lagMs / 1000);
          }
        },
      });
    }
    const backlogEntries = sources.backlogEntries;
    if (backlogEntries) {
      new Gauge({
        name: 'loyalty_sqlite_backlog_entries',
        help: 'Board entries changed but not yet folded into board_entries (SQLite)',
        registers,
        collect() {
          this.set(backlogEntries());
        },
      });
    }
  }

  /** One answered request: counted, timed, and a 429 counted as a rate-limit refusal. */
  observe(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unmatched';
    const operation = operationOf(request) ?? '';
    const status = reply.statusCode;
    this.requests.inc({ route, method: request.method, operation, status });
    this.latency.observe({ route, method: request.method, operation }, reply.elapsedTime / 1000);
    if (status === 429) this.rateLimited.inc({ route });
  }

  recordsIngested(counts: { accepted: number; duplicates: number; refused: number }): void {
    this.records.inc({ outcome: 'accepted' }, counts.accepted);
    this.records.inc({ outcome: 'duplicate' }, counts.duplicates);
    this.records.inc({ outcome: 'refused' }, counts.refused);
  }

  rankIndexLoaded(_board: unknown, _entries: number, ms: number): void {
    this.indexLoads.observe(ms / 1000);
  }
}
