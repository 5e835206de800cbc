import { DataSource, type DataSourceOptions } from 'typeorm';
import { createDatabaseProbe } from '../../src/storage/database-probe';
import { readOrderedRows } from '../../src/storage/ordered-rows';
import { dialectOf, resolveDialect } from '../../src/storage/engines';
import {
  BoardSql,
  boardSql,
  countAheadParams,
  keysetPageParams,
  splitParams,
} from '../../src/leaderboards/read/board-sql';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { hostDataSourceOptions } from '../../src/host/config/host-data-source';
import { runSql } from '../utils/sql';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';
import { HEAD_BOUND, RankBucketSql } from '../../src/leaderboards/rank-buckets/rank-bucket-sql';

const BOARD = { spaceId: 1, sprintId: 0 };
const KEY = {
  points: 500,
  reachedAt: 1_000_000,
  addressKey: '0x00000000000000000000000000000000000004d2',
};

/**
 * Every read of board_entries must be an index range, never a scan of the table: a scan costs
 * the whole board on every page. Two boards of 20,000 rows each make a scan visibly wrong to the
 * planner (MariaDB prefers scans on tiny tables). PostgreSQL's planner takes no index hints and
 * weighs scans by cost, which a table this small cannot show: its plans are read with sequential
 * scans priced out (enable_seqscan off), so a statement that cannot be read by index ranges still
 * shows a Seq Scan; what it picks at a million entries the page benchmark measures
 * (docs/performance.md).
 */
describe.each(DB_KINDS)('leaderboard query plans on %s', (kind) => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sql: BoardSql;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dataSource = await new DataSource(
      await hostDataSourceOptions(parseDatabaseUrl(db.url), { migrationsRun: true }),
    ).initialize();
    sql = boardSql(dialectOf(dataSource));
    for (const sprintId of [0, 7]) {
      for (let start = 0; start < 20_000; start += 500) {
        const rows = Array.from({ length: 500 }, (_, i) => start + i);
        await runSql(
          dataSource,
          `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
          rows.flatMap((n) => [
            1,
            sprintId,
            `0x${n.toString(16).padStart(40, '0')}`,
            (n % 997) + 1,
            n * 1000,
          ]),
        );
      }
    }
    // Rank buckets of 100 entries over each board, as a board of this size would have.
    for (const sprintId of [0, 7]) {
      const bounds = Array.from({ length: 200 }, (_, i) => i * 100);
      await runSql(
        dataSource,
        `INSERT INTO board_rank_buckets (space_id, sprint_id, points, reached_at, address_key, entry_count) VALUES ${bounds.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
        bounds.flatMap((n) =>
          n === 0
            ? [1, sprintId, HEAD_BOUND.points, 0, '', 100]
            : [1, sprintId, (n % 997) + 1, n * 1000, `0x${n.toString(16).padStart(40, '0')}`, 100],
        ),
      );
    }
    await dataSource.query(
      {
        sqlite: 'ANALYZE',
        mariadb: 'ANALYZE TABLE board_entries, board_rank_buckets',
        postgres: 'VACUUM ANALYZE board_entries, board_rank_buckets',
      }[kind],
    );
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  /** The plan of a statement of house SQL, as the database shows it. */
  async function planOf(sql: string, params: unknown[]): Promise<unknown> {
    if (kind === 'sqlite') return runSql(dataSource, `EXPLAIN QUERY PLAN ${sql}`, params);
    if (kind === 'mariadb') return runSql(dataSource, `EXPLAIN ${sql}`, params);
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query('SET enable_seqscan = off');
      const [row] = await runSql(runner, `EXPLAIN (FORMAT JSON) ${sql}`, params);
      return row['QUERY PLAN'];
    } finally {
      await runner.query('RESET enable_seqscan');
      await runner.release();
    }
  }

  /** The indexes of each table read here (a bitmap scan's node names the index, not the table). */
  const indexesOf: Record<string, RegExp> = {
    board_entries: /^(ix_board_entries_rank|board_entries_pkey)$/,
    board_rank_buckets: /^board_rank_buckets_pkey$/,
  };

  /**
   * PostgreSQL: each node of a JSON plan that reads `table`, as "node type index", then "WHERE"
   * and the index condition where the index is searched (not scanned whole and filtered).
   */
  function postgresAccesses(plan: unknown, table: string): string[] {
    const found: string[] = [];
    const visit = (node: Record<string, unknown>) => {
      const index = node['Index Name'] as string | undefined;
      const condition =
        typeof node['Index Cond'] === 'string' ? ` WHERE ${node['Index Cond']}` : '';
      if (node['Relation Name'] === table && node['Node Type'] !== 'Bitmap Heap Scan')
        found.push(`${String(node['Node Type'])} ${index ?? ''}`.trim() + condition);
      else if (node['Node Type'] === 'Bitmap Index Scan' && index && indexesOf[table].test(index))
        found.push(`Bitmap Index Scan ${index}${condition}`);
      for (const child of (node.Plans as Array<Record<string, unknown>>) ?? []) visit(child);
    };
    for (const root of plan as Array<{ Plan: Record<string, unknown> }>) visit(root.Plan);
    return found;
  }

  async function boardAccesses(
    sql: string,
    params: unknown[],
    table = 'board_entries',
  ): Promise<string[]> {
    if (kind === 'postgres') return postgresAccesses(await planOf(sql, params), table);
    if (kind === 'sqlite') {
      const plan: Array<{ detail: string }> = await dataSource.query(
        `EXPLAIN QUERY PLAN ${sql}`,
        params,
      );
      return plan
        .map((row) => row.detail)
        .filter((detail) => new RegExp(`\\b${table}\\b`).test(detail));
    }
    const plan: Array<{ table: string; type: string; key: string | null }> = await dataSource.query(
      `EXPLAIN ${sql}`,
      params,
    );
    return plan.filter((row) => row.table === table).map((row) => `${row.type} ${row.key}`);
  }

  /** Reads of board_rank_buckets: ranges of its primary key, which is in rank order. */
  const expectBucketRanges = (accesses: string[], count: number) => {
    expect(accesses).toHaveLength(count);
    for (const access of accesses) {
      if (kind === 'sqlite')
        expect(access).toMatch(
          /^SEARCH board_rank_buckets USING PRIMARY KEY \(space_id=\? AND sprint_id=\?/,
        );
      else if (kind === 'postgres')
        expect(access).toMatch(
          /^(Index|Index Only|Bitmap Index) Scan board_rank_buckets_pkey WHERE .*\bspace_id = .*\bsprint_id = /,
        );
      else expect(access).toMatch(/^(range|ref|const|eq_ref) PRIMARY$/);
    }
  };

  const expectIndexRanges = (accesses: string[], count: number) => {
    expect(accesses).toHaveLength(count);
    for (const access of accesses) {
      if (kind === 'sqlite')
        expect(access).toMatch(
          /^SEARCH board_entries USING (COVERING )?INDEX ix_board_entries_rank \(/,
        );
      else if (kind === 'postgres')
        expect(access).toMatch(
          /^(Index|Index Only|Bitmap Index) Scan ix_board_entries_rank WHERE .*\bspace_id = .*\bsprint_id = /,
        );
      else expect(access).toMatch(/^(range|ref) ix_board_entries_rank$/);
    }
  };

  it.each(['after', 'before'] as const)(
    'pages %s a cursor with three index ranges',
    async (direction) => {
      expectIndexRanges(
        await boardAccesses(
          direction === 'after' ? sql.pageAfter : sql.pageBefore,
          keysetPageParams(BOARD, KEY, 51),
        ),
        3,
      );
    },
  );

  it('counts the entries ahead with three index ranges', async () => {
    expectIndexRanges(await boardAccesses(sql.countAhead, countAheadParams(BOARD, KEY)), 3);
  });

  it('reads the first page from the index', async () => {
    expectIndexRanges(await boardAccesses(sql.offsetPage, [1, 0, 51, 0]), 1);
  });

  it('loads a whole board for a rank index in index order, with no sort', async () => {
    // The plan of the SELECT itself (MariaDB's SET STATEMENT prefix cannot be EXPLAINed).
    const select = sql.wholeBoard.replace(/^SET STATEMENT .* FOR /, '');
    expectIndexRanges(await boardAccesses(select, [1, 0]), 1);
    expect(JSON.stringify(await planOf(select, [1, 0]))).not.toMatch(
      /TEMP B-TREE|filesort|"(Incremental )?Sort"/i,
    );
  });

  it.each(['boardBefore', 'boardFrom'] as const)(
    'reads the part of a board %s a split key in index order, with no sort',
    async (part) => {
      expectIndexRanges(await boardAccesses(sql[part], splitParams(BOARD, KEY)), 1);
      expect(JSON.stringify(await planOf(sql[part], splitParams(BOARD, KEY)))).not.toMatch(
        /TEMP B-TREE|filesort|"(Incremental )?Sort"/i,
      );
    },
  );

  it('loads a whole board past the statement time limit a request has', async () => {
    const dialect = await resolveDialect(dataSource);
    if (kind === 'sqlite') {
      expect(dialect.untimed('SELECT 1')).toBe('SELECT 1');
      return;
    }
    if (kind === 'postgres') {
      // A pool limited as DatabaseProbe.limitStatements limits it: a plain statement is cut off,
      // the ordered read (a rank-index load) lifts the limit for its own transaction.
      const limited = await new DataSource({
        ...(await hostDataSourceOptions(parseDatabaseUrl(db.url))),
        poolSize: 1,
      } as DataSourceOptions).initialize();
      try {
        createDatabaseProbe(limited, 1000).limitStatements(50);
        await expect(runSql(limited, 'SELECT pg_sleep(0.3)')).rejects.toThrow(
          /canceling statement due to statement timeout/,
        );
        const rows: unknown[][] = [];
        await readOrderedRows(limited, {
          query: {
            whole: { sql: 'SELECT 1 AS n FROM (SELECT pg_sleep(0.3)) AS slept', params: [] },
            first: () => ({ sql: '', params: [] }),
            after: () => ({ sql: '', params: [] }),
          },
          row: (columns) => rows.push(columns),
          stillWanted: () => true,
          chunkRows: 10,
        });
        expect(rows).toEqual([[1]]);
        // And the connection is back in the pool with its limit.
        await expect(runSql(limited, 'SELECT pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
      } finally {
        await limited.destroy();
      }
      return;
    }
    expect(boardSql(dialect).wholeBoard).toMatch(
      /^SET STATEMENT max_statement_time = 0 FOR SELECT/,
    );
    const runner = dataSource.createQueryRunner();
    try {
      // As DatabaseProbe.limitStatements limits every pooled connection.
      await runner.query('SET SESSION max_statement_time = 0.05');
      await expect(runner.query('SELECT SLEEP(0.3) AS slept')).rejects.toThrow(
        /max_statement_time/,
      );
      const [row] = await runner.query(dialect.untimed('SELECT SLEEP(0.3) AS slept'));
      expect(Number(row.slept)).toBe(0); // slept the whole time, not interrupted
    } finally {
      await runner.query('SET SESSION max_statement_time = 0');
      await runner.release();
    }
  });

  it('finds one address by its primary key', async () => {
    const [access] = await boardAccesses(sql.findEntry, [1, 0, KEY.addressKey]);
    expect(access).toMatch(
      {
        sqlite: /USING PRIMARY KEY/,
        mariadb: /^(const|eq_ref|ref|range) PRIMARY$/,
        postgres:
          /^(Index|Index Only|Bitmap Index) Scan board_entries_pkey WHERE .*\bspace_id = .*\bsprint_id = .*\baddress_key\b/,
      }[kind],
    );
  });

  describe('rank buckets', () => {
    const buckets = () => new RankBucketSql(dialectOf(dataSource));
    const BOUND = {
      points: 700,
      reachedAt: 700_000,
      addressKey: `0x${(700).toString(16).padStart(40, '0')}`,
    };
    const LOWER = { points: 300, reachedAt: 900_000, addressKey: KEY.addressKey };

    it("read a board's buckets with one range of the buckets' key", async () => {
      const { sql: text, params } = buckets().allBuckets(BOARD, false);
      expectBucketRanges(await boardAccesses(text, params, 'board_rank_buckets'), 1);
    });

    it.each([
      ['the head bucket', HEAD_BOUND, KEY, 3],
      ['a bound with more points', BOUND, LOWER, 5],
      ['a bound with the same points', { ...BOUND, points: LOWER.points, reachedAt: 1 }, LOWER, 3],
      ['a bound with the same points and time', { ...LOWER, addressKey: '0x' }, LOWER, 1],
    ] as const)(
      'count the entries ahead from %s with index ranges only',
      async (_name, bound, key, entryRanges) => {
        const { sql: text, params } = buckets().countAhead(BOARD, bound, key);
        expectIndexRanges(await boardAccesses(text, params), entryRanges);
        const accesses = await boardAccesses(text, params, 'board_rank_buckets');
        // MariaDB answers the look-up of a bound that is not there while planning: no access.
        const lookups = kind === 'mariadb' && accesses.length === 3 ? 3 : 4;
        expectBucketRanges(accesses, bound === HEAD_BOUND ? 1 : lookups);
      },
    );

    it('count the entries ahead summing the buckets from the bottom with index ranges only', async () => {
      const { sql: text, params } = buckets().countAhead(BOARD, BOUND, LOWER, 'bottom');
      expectIndexRanges(await boardAccesses(text, params), 5);
      // Three sums of the buckets after the bound and the bound's look-up, by the buckets' key.
      const accesses = await boardAccesses(text, params, 'board_rank_buckets');
      expectBucketRanges(accesses, kind === 'mariadb' && accesses.length === 3 ? 3 : 4);
    });

    it.each([
      ['the head bucket', HEAD_BOUND, 1],
      ['another bucket', BOUND, 3],
    ] as const)('read a page inside %s with index ranges only', async (_name, bound, ranges) => {
      const { sql: text, params } = buckets().pageInBucket(BOARD, bound, 150, 51);
      expectIndexRanges(await boardAccesses(text, params), ranges);
    });
  });
});
