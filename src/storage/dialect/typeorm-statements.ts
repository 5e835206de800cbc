import type { QueryRunner } from 'typeorm';
import { dataSourceOf, Queryable, queryRunnerOf } from './sql-dialect';

/*
 * Statements run through TypeORM's own query runners, for the databases whose drivers read house
 * SQL as it is (better-sqlite3, mysql2).
 */

/** Runs a statement and answers its rows. */
export function typeormQuery<Row>(
  source: Queryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Row[]> {
  return source.query(sql, [...params]) as Promise<Row[]>;
}

/** Runs a write statement and answers how many rows it changed. */
export async function typeormExecute(
  source: Queryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<number> {
  const bound = queryRunnerOf(source);
  const runner: QueryRunner = bound ?? dataSourceOf(source).createQueryRunner();
  try {
    const result = await runner.query(sql, [...params], true);
    return result.affected ?? 0;
  } finally {
    if (!bound) await runner.release();
  }
}
