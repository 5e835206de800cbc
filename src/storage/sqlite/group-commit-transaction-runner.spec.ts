import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, EntityManager } from 'typeorm';
import {
  commitsIn,
  insertNote as insert,
  openScratchSqlite,
  storedNotes,
} from '../../../test/utils/scratch-sqlite';
import { GroupCommitTransactionRunner } from './group-commit-transaction-runner';
import { commitRightAfter } from '../transactions/commit-hooks';
import { afterCommit } from '../transactions/transaction-runner';

describe('GroupCommitTransactionRunner on SQLite', () => {
  let dir: string;
  let source: DataSource;
  let statements: string[];
  let runner: GroupCommitTransactionRunner;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'transaction-runner-'));
    ({ source, statements } = await openScratchSqlite(dir));
    runner = new GroupCommitTransactionRunner(source);
  });
  afterEach(async () => {
    await runner.onApplicationShutdown();
    await source.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = () => storedNotes(source);
  const commits = () => commitsIn(statements);

  it('commits units that queue up together once, each seeing the ones before it', async () => {
    const seen: number[][] = [];
    const unit = (id: number) => async (manager: EntityManager) => {
      await insert(manager, id);
      const rows = await manager.query('SELECT id FROM notes ORDER BY id');
      seen.push(rows.map((row: { id: number }) => row.id));
      return id * 10;
    };
    const results = await Promise.all([
      runner.run(unit(1)),
      runner.run(unit(2)),
      runner.run(unit(3)),
    ]);
    expect(results).toEqual([10, 20, 30]);
    expect(seen).toEqual([[1], [1, 2], [1, 2, 3]]);
    expect(commits()).toBe(1);
    expect(await stored()).toEqual([1, 2, 3]);
  });

  it('commits right after a unit that asks to be last, before the units queued behind it', async () => {
    let statementsAtHook = -1;
    const last = async (manager: EntityManager) => {
      await insert(manager, 1);
      commitRightAfter(manager);
      afterCommit(manager, () => (statementsAtHook = statements.length));
      return 1;
    };
    const unit = (id: number) => async (manager: EntityManager) => {
      await insert(manager, id);
      return id;
    };
    const results = await Promise.all([runner.run(last), runner.run(unit(2)), runner.run(unit(3))]);
    expect(results).toEqual([1, 2, 3]);
    expect(commits()).toBe(2);
    // When unit 1's hook ran, its commit was the last statement: unit 2 had not begun.
    const inserts = statements.filter((sql) => sql.startsWith('INSERT INTO notes'));
    expect(inserts).toHaveLength(3);
    expect(
      statements.slice(0, statementsAtHook).filter((sql) => sql.startsWith('INSERT INTO notes')),
    ).toHaveLength(1);
    expect(commitsIn(statements.slice(0, statementsAtHook))).toBe(1);
    expect(await stored()).toEqual([1, 2, 3]);
  });

  it('fails a failing unit of a group alone, and runs only the others’ commit hooks', async () => {
    const hooks: string[] = [];
    const runs: number[] = [];
    const unit =
      (id: number, fail = false) =>
      async (manager: EntityManager) => {
        runs.push(id);
        afterCommit(manager, () => hooks.push(`committed ${id}`));
        await insert(manager, id);
        await insert(manager, id + 100);
        if (fail) throw new Error(`unit ${id} refused`);
        return id;
      };
    const results = await Promise.allSettled([
      runner.run(unit(1)),
      runner.run(unit(2, true)),
      runner.run(unit(3)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('unit 2 refused') },
      { status: 'fulfilled', value: 3 },
    ]);
    expect(await stored()).toEqual([1, 3, 101, 103]);
    expect(hooks).toEqual(['committed 1', 'committed 3']);
    // The group rolled back: unit 1 ran again without unit 2; unit 3 went to the next group.
    expect(runs).toEqual([1, 2, 1, 3]);
    expect(commits()).toBe(2);
    expect(statements.some((sql) => sql.includes('SAVEPOINT'))).toBe(false);
  });

  it('runs the units before a failing one again until they commit without it', async () => {
    const runs: number[] = [];
    const unit =
      (id: number, fail = false) =>
      async (manager: EntityManager) => {
        runs.push(id);
        await insert(manager, id);
        if (fail) throw new Error(`unit ${id} refused`);
        return id;
      };
    const results = await Promise.allSettled([
      runner.run(unit(1)),
      runner.run(unit(2)),
      runner.run(unit(3, true)),
      runner.run(unit(4, true)),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    expect(runs).toEqual([1, 2, 3, 1, 2, 4]);
    expect(await stored()).toEqual([1, 2]);
    expect(commits()).toBe(1);
  });

  it('runs a failed unit again when a unit before it fails on the re-run', async () => {
    const runs: string[] = [];
    let secondRun = false;
    const results = await Promise.allSettled([
      runner.run(async (manager) => {
        runs.push('1');
        await insert(manager, 1);
        return 1;
      }),
      runner.run(async (manager) => {
        runs.push('2');
        await insert(manager, 2);
        // Succeeds the first time only: its failure on the re-run leaves no row 2 behind.
        if (secondRun) throw new Error('unit 2 refused on its re-run');
        secondRun = true;
        return 2;
      }),
      runner.run(async (manager) => {
        runs.push('3');
        const rows: unknown[] = await manager.query('SELECT id FROM notes WHERE id = 2');
        await insert(manager, 3);
        if (rows.length > 0) throw new Error('unit 3 refused: it saw row 2');
        return 3;
      }),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('unit 2 refused on its re-run') },
      // Answered from what committed (no row 2), not from the attempt that saw row 2.
      { status: 'fulfilled', value: 3 },
    ]);
    expect(runs).toEqual(['1', '2', '3', '1', '2', '1', '3']);
    expect(await stored()).toEqual([1, 3]);
  });

  it('opens a new writer when SQLite rolled a transaction back itself', async () => {
    await expect(
      runner.run(async (manager) => {
        await insert(manager, 1);
        // As SQLite does on a full disk or an I/O error: the transaction is gone.
        await manager.query('ROLLBACK');
        throw new Error('disk I/O error');
      }),
    ).rejects.toThrow('disk I/O error');
    // A later failure must not leave a transaction open that nothing would ever commit.
    await expect(
      runner.run(async (manager) => {
        await insert(manager, 2);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await runner.run((manager) => insert(manager, 3));
    await runner.run((manager) => insert(manager, 4));
    // Committed for real: the main connection sees both.
    expect(await stored()).toEqual([3, 4]);
  });

  it('leaves nothing of a unit that fails alone', async () => {
    await runner.run((manager) => insert(manager, 1));
    await expect(
      runner.run(async (manager) => {
        await insert(manager, 2);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(statements.some((sql) => sql.startsWith('SAVEPOINT'))).toBe(false);
    expect(await stored()).toEqual([1]);
  });

  it('runs the whole group again when a unit meets a busy database', async () => {
    const attempts = new Map<number, number>();
    const unit =
      (id: number, busyOnce = false) =>
      async (manager: EntityManager) => {
        const attempt = (attempts.get(id) ?? 0) + 1;
        attempts.set(id, attempt);
        await insert(manager, id);
        if (busyOnce && attempt === 1)
          throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        return id;
      };
    const results = await Promise.all([runner.run(unit(1)), runner.run(unit(2, true))]);
    expect(results).toEqual([1, 2]);
    expect(Object.fromEntries(attempts)).toEqual({ 1: 2, 2: 2 });
    expect(await stored()).toEqual([1, 2]);
  });

  it('lets a unit that reads before it writes commit while another process keeps committing', async () => {
    // Another process (a live server, for an import) commits a short transaction every 30 ms.
    const other = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require(process.env.DRIVER))(process.env.FILE);
         db.pragma('busy_timeout = 5000');
         const insert = db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)');
         const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
         process.stdout.write('writing\\n');
         for (let id = 1000; ; id++) {
           db.exec('BEGIN IMMEDIATE');
           insert.run(id, 'other');
           pause(10);
           db.exec('COMMIT');
           pause(20);
         }`,
      ],
      {
        env: {
          ...process.env,
          DRIVER: require.resolve('better-sqlite3'),
          FILE: join(dir, 'units.sqlite'),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      await once(other.stdout, 'data');
      // An import's unit: it reads its batch's keys, works on them, then writes.
      const seen = await runner.run(async (manager) => {
        const [before] = await manager.query('SELECT COUNT(*) AS n FROM notes');
        await new Promise((resolve) => setTimeout(resolve, 100));
        await insert(manager, 1);
        const [after] = await manager.query('SELECT COUNT(*) AS n FROM notes');
        return after.n - before.n;
      });
      // Taken with the write lock from its first read, the unit saw no commit of the other
      // process. (Before, its first write met one and failed, every attempt, with SQLITE_BUSY.)
      expect(seen).toBe(1);
      expect(await stored()).toContain(1);
    } finally {
      other.kill();
      await once(other, 'exit');
    }
  });

  it('runs units that arrive while a group runs in the next group, in order', async () => {
    const order: number[] = [];
    const unit = (id: number) => async (manager: EntityManager) => {
      order.push(id);
      await insert(manager, id);
      return id;
    };
    const later: Array<Promise<number>> = [];
    const first = runner.run(async (manager) => {
      // Queued while this group runs: they must wait for it and commit after it.
      later.push(runner.run(unit(2)), runner.run(unit(3)));
      return unit(1)(manager);
    });
    expect(await first).toBe(1);
    expect(await Promise.all(later)).toEqual([2, 3]);
    expect(order).toEqual([1, 2, 3]);
    expect(commits()).toBe(2);
  });

  it('answers a committed unit even when a commit hook fails, and runs the other hooks', async () => {
    const hooks: string[] = [];
    const results = await Promise.all([
      runner.run(async (manager) => {
        afterCommit(manager, () => {
          throw new Error('cache gone');
        });
        afterCommit(manager, () => hooks.push('second hook of 1'));
        await insert(manager, 1);
        return 1;
      }),
      runner.run(async (manager) => {
        afterCommit(manager, () => hooks.push('hook of 2'));
        await insert(manager, 2);
        return 2;
      }),
    ]);
    expect(results).toEqual([1, 2]);
    expect(hooks).toEqual(['second hook of 1', 'hook of 2']);
    expect(await stored()).toEqual([1, 2]);
  });

  it('takes no further unit into a group that has run past its budget', async () => {
    const slow = async (manager: EntityManager) => {
      await insert(manager, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return 1;
    };
    const results = await Promise.all([
      runner.run(slow),
      runner.run((manager) => insert(manager, 2).then(() => 2)),
      runner.run((manager) => insert(manager, 3).then(() => 3)),
    ]);
    expect(results).toEqual([1, 2, 3]);
    // The first group stopped after the slow unit; the other two committed together after it.
    expect(commits()).toBe(2);
    expect(await stored()).toEqual([1, 2, 3]);
  });
});
