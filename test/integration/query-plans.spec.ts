import { DataSource } from 'typeorm';
import { dialectOf, resolveDialect } from '../../src/storage/dialect/sql-dialect';
import {
  BoardSql,
  boardSql,
  countAheadParams,
  keysetPageParams,
} from '../../src/leaderboards/read/board-sql';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { resolveHostDataSourceOptions } from '../../src/host/config/host-data-source';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';

const BOARD = { spaceId: 1, sprintId: 0 };
const KEY = {
  points: 500,
  reachedAt: 1_000_000,
  addressKey: '0x00000000000000000000000000000000000004d2',
};

/**
 * Every read of board_entries must be an index range, never a scan of the table: a scan costs
 * the whole board on every page. Two boards of 20,000 rows each make a scan visibly wrong to the
 * planner (MariaDB prefers scans on tiny tables).
 */
describe.each(DB_KINDS)('leaderboard query plans on %s', (kind) => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sql: BoardSql;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dataSource = await new DataSource(
      await resolveHostDataSourceOptions(parseDatabaseUrl(db.url), { migrationsRun: true }),
    ).initialize();
    sql = boardSql(dialectOf(dataSource));
    for (const sprintId of [0, 7]) {
      for (let start = 0; start < 20_000; start += 500) {
        const rows = Array.from({ length: 500 }, (_, i) => start + i);
        await dataSource.query(
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
    await dataSource.query(kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE TABLE board_entries');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  async function boardAccesses(sql: string, params: unknown[]): Promise<string[]> {
    if (kind === 'sqlite') {
      const plan: Array<{ detail: string }> = await dataSource.query(
        `EXPLAIN QUERY PLAN ${sql}`,
        params,
      );
      return plan.map((row) => row.detail).filter((detail) => /board_entries/.test(detail));
    }
    const plan: Array<{ table: string; type: string; key: string | null }> = await dataSource.query(
      `EXPLAIN ${sql}`,
      params,
    );
    return plan
      .filter((row) => row.table === 'board_entries')
      .map((row) => `${row.type} ${row.key}`);
  }

  const expectIndexRanges = (accesses: string[], count: number) => {
    expect(accesses).toHaveLength(count);
    for (const access of accesses) {
      if (kind === 'sqlite')
        expect(access).toMatch(
          /^SEARCH board_entries USING (COVERING )?INDEX ix_board_entries_rank \(/,
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
    const plan: Array<Record<string, unknown>> = await dataSource.query(
      `${kind === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${select}`,
      [1, 0],
    );
    expect(JSON.stringify(plan)).not.toMatch(/TEMP B-TREE|filesort/i);
  });

  it('loads a whole board past the statement time limit a request has', async () => {
    const dialect = await resolveDialect(dataSource);
    if (kind === 'sqlite') {
      expect(dialect.untimed('SELECT 1')).toBe('SELECT 1');
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
      kind === 'sqlite' ? /USING PRIMARY KEY/ : /^(const|eq_ref|ref|range) PRIMARY$/,
    );
  });
});
