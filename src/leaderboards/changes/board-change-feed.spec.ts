import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../../loyalty.entities';
import { dataSourceOptions } from '../../storage/connection/data-source-options';
import { BoardChange, BoardChangeFeed } from './board-change-feed';

const MINUTE = 60_000;

/**
 * The feed against a real SQLite file, with its clock in the test's hands: polls run only when
 * the test asks (catchUp), and an outage is the database's queries failing.
 */
describe('BoardChangeFeed gaps', () => {
  let dir: string;
  let source: DataSource;
  let feed: BoardChangeFeed;
  let now: number;
  let down: boolean;
  let applied: BoardChange[];

  const write = (seq: number, address: string) =>
    source.query(
      `INSERT INTO board_changes (seq, space_id, sprint_id, address_key, points, reached_at, created_at)
       VALUES (?, 1, 0, ?, 10, 1, ?)`,
      [seq, address, now],
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'board-change-feed-'));
    source = await new DataSource(
      await dataSourceOptions(
        { kind: 'sqlite', file: join(dir, 'db.sqlite') },
        { migrationsRun: true, entities: LOYALTY_ENTITIES, migrations: LOYALTY_MIGRATIONS },
      ),
    ).initialize();
    now = Date.parse('2026-01-01T00:00:00Z');
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    down = false;
    const query = source.query.bind(source);
    jest.spyOn(source, 'query').mockImplementation((sql, parameters) => {
      if (down) return Promise.reject(new Error('connect ECONNREFUSED'));
      return query(sql, parameters);
    });
    applied = [];
    // Polls only on catchUp(): the interval never fires within a test.
    const options: LoyaltyModuleOptions = { rankIndex: { pollIntervalMs: 24 * 60 * MINUTE } };
    feed = new BoardChangeFeed(source, options);
    feed.subscribe({
      wantsChanges: () => true,
      apply: (changes) => applied.push(...changes),
      lost: () => undefined,
    });
  });

  afterEach(async () => {
    feed.onApplicationShutdown();
    jest.restoreAllMocks();
    await source.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gap at seq 2 (a transaction that took 2 then 3, committing 3 first), seen at the start. */
  async function startWithGap(): Promise<void> {
    await write(1, 'a');
    await write(3, 'c');
    await feed.start();
  }

  it('says once that reads fail, and once that they work again, however many polls fail', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    await startWithGap();
    down = true;
    for (let poll = 0; poll < 25; poll++) {
      now += 100;
      await feed.catchUp().catch(() => undefined);
    }
    expect(warn.mock.calls.map(([message]) => message)).toEqual([
      'Reading board changes failed: connect ECONNREFUSED (said once until it works again)',
    ]);
    down = false;
    now += 100;
    await feed.catchUp();
    await feed.catchUp();
    expect(log.mock.calls.map(([message]) => message)).toEqual([
      'Reading board changes works again, after 25 failed reads in 3 s',
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('delivers a row that commits late into a gap', async () => {
    await startWithGap();
    now += MINUTE;
    await write(2, 'b');
    await feed.catchUp();
    expect(applied.map((c) => [c.seq, c.addressKey])).toEqual([[2, 'b']]);
  });

  it('looks once more at a gap that timed out while the database was unreachable', async () => {
    await startWithGap();
    now += 4 * MINUTE;
    await feed.catchUp(); // a successful poll: the gap is 4 minutes old
    down = true;
    now += 2 * MINUTE; // the gap times out during the outage
    await feed.catchUp();
    expect(feed.isFresh()).toBe(false);
    await write(2, 'b').catch(() => undefined); // refused: the database is down
    down = false;
    await write(2, 'b'); // the late transaction commits as the database comes back
    await feed.catchUp();
    expect(applied.map((c) => [c.seq, c.addressKey])).toEqual([[2, 'b']]);
    expect(feed.isFresh()).toBe(true);
  });

  it('drops a timed-out gap after a successful look: a row later in it is not read', async () => {
    await startWithGap();
    now += 4 * MINUTE;
    await feed.catchUp();
    now += 2 * MINUTE;
    await feed.catchUp(); // looks, finds nothing, drops the gap
    await write(2, 'b');
    await write(4, 'd');
    await feed.catchUp();
    expect(applied.map((c) => [c.seq, c.addressKey])).toEqual([[4, 'd']]);
  });
});
