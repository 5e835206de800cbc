import { DataSource } from 'typeorm';
import { appendEntryChanges, EntryState } from '../../src/leaderboards/changes/board-change-log';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

describe.each(DB_KINDS)('board change log on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => (t = await startTestApp(kind)));
  afterAll(() => t?.close());

  // SQLite writes change rows 64 to a statement and the remainder one by one: every count
  // around those sizes must come out whole, their sequence numbers in the order given.
  it.each([1, 63, 64, 65, 128, 200])('appends %i entries whole and in order', async (count) => {
    const source = t.app.get(DataSource);
    const entries: EntryState[] = Array.from({ length: count }, (_, i) => ({
      spaceId: 70,
      sprintId: count,
      addressKey: `0xlog${((i * 37) % count).toString().padStart(3, '0')}-${i}`,
      points: 1000 - i,
      reachedAt: 1_700_000_000_000 + i,
    }));
    await source.transaction((manager) => appendEntryChanges(manager, entries));
    const rows: Array<Record<string, unknown>> = await runSql(
      source,
      `SELECT space_id AS spaceId, sprint_id AS sprintId, address_key AS addressKey, points,
              reached_at AS reachedAt
       FROM board_changes WHERE space_id = 70 AND sprint_id = ? ORDER BY seq`,
      [count],
    );
    expect(
      rows.map(({ spaceId, sprintId, addressKey, points, reachedAt }) => ({
        spaceId: Number(spaceId),
        sprintId: Number(sprintId),
        addressKey,
        points: Number(points),
        reachedAt: Number(reachedAt),
      })),
    ).toEqual(entries);
  });
});
