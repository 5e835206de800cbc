import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { GroupCommitTransactionRunner } from '../../storage/sqlite/group-commit-transaction-runner';
import {
  commitsIn,
  insertNote as insert,
  openScratchSqlite,
  storedNotes,
} from '../../../test/utils/scratch-sqlite';
import { IngestLoad } from './ingest-load';

/** The load hint as the write path's group commit sees it, on a real SQLite file. */
describe('IngestLoad feeding a group commit', () => {
  let dir: string;
  let source: DataSource;
  let statements: string[];
  let runner: GroupCommitTransactionRunner;
  let load: IngestLoad;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-load-'));
    ({ source, statements } = await openScratchSqlite(dir));
    runner = new GroupCommitTransactionRunner(source);
    load = new IngestLoad();
    runner.useLoadHint(load);
  });
  afterEach(async () => {
    await runner.onApplicationShutdown();
    await source.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = () => storedNotes(source);
  const commits = () => commitsIn(statements);

  describe('while several requests are in flight', () => {
    const note = (id: number) => (manager: EntityManager) => insert(manager, id).then(() => id);
    const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    it('waits a moment for the units of the others, and commits them together', async () => {
      const leave = [load.enterRequest(), load.enterRequest(), load.enterRequest()];
      // Each request's unit comes a turn of the event loop after the one before (its body
      // arriving): later than the group would start without waiting.
      const first = runner.run(note(1));
      await turn();
      const second = runner.run(note(2));
      await turn();
      const third = runner.run(note(3));
      expect(await Promise.all([first, second, third])).toEqual([1, 2, 3]);
      expect(commits()).toBe(1);
      for (const done of leave) done();
    });

    it('waits only a moment for a request whose unit does not come', async () => {
      const leaveA = load.enterRequest();
      const leaveB = load.enterRequest();
      // B is still uploading its body: A's unit commits after a moment (20 ms), not after B.
      const started = performance.now();
      expect(await runner.run(note(1))).toBe(1);
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(15);
      expect(waited).toBeLessThan(1000);
      expect(await stored()).toEqual([1]);
      leaveA();
      leaveB();
    });

    it('counts the clients answered a moment ago as in flight, until they are back', async () => {
      // Four clients feeding a file, each on a connection of its own. A group of three was just
      // answered; the fourth's request, sent while that group ran, is read only now.
      const connections = [{}, {}, {}, {}];
      for (const connection of connections.slice(0, 3)) load.enterRequest(connection)();
      load.enterRequest(connections[3]);
      const units = [runner.run(note(4))];
      await turn();
      // The answered three are back, a turn of the event loop apart: all four commit together.
      for (const [i, connection] of connections.slice(0, 3).entries()) {
        load.enterRequest(connection);
        units.push(runner.run(note(i + 1)));
        await turn();
      }
      expect(await Promise.all(units)).toEqual([4, 1, 2, 3]);
      expect(commits()).toBe(1);
    });

    it('does not wait for a client answered a moment ago whose connection closed', async () => {
      const [gone, next] = [{}, {}];
      load.enterRequest(gone)();
      load.clientGone(gone);
      load.enterRequest(next);
      const unit = runner.run(note(1));
      // Not waited for: only one client may be sending.
      await after(4);
      const straggler = runner.run(note(2));
      expect(await Promise.all([unit, straggler])).toEqual([1, 2]);
      expect(commits()).toBe(2);
    });

    it('expects no more clients than came, for a while, once a wait for them ran out', async () => {
      // Three clients answered whose next requests go on other connections (fetch's pool may
      // send them so): they look like clients still to come, and the wait for them runs out.
      for (const connection of [{}, {}, {}]) load.enterRequest(connection)();
      const leave = load.enterRequest({});
      const started = performance.now();
      expect(await runner.run(note(1))).toBe(1);
      expect(performance.now() - started).toBeGreaterThanOrEqual(15);
      leave();
      // The same again: this time the group does not wait for them.
      for (const connection of [{}, {}, {}]) load.enterRequest(connection)();
      load.enterRequest({});
      const unit = runner.run(note(2));
      await after(4);
      const straggler = runner.run(note(3));
      expect(await Promise.all([unit, straggler])).toEqual([2, 3]);
      expect(commits()).toBe(3);
    });

    it('does not wait when requests come one at a time', async () => {
      // One client, sending its next request on the same connection once answered.
      const connection = {};
      for (const id of [1, 2]) {
        const leave = load.enterRequest(connection);
        const unit = runner.run(note(id));
        // A unit queued a little later is not waited for: no other request was in flight.
        await after(4);
        const straggler = runner.run(note(id + 10));
        expect(await Promise.all([unit, straggler])).toEqual([id, id + 10]);
        leave();
      }
      expect(commits()).toBe(4);
      expect(await stored()).toEqual([1, 2, 11, 12]);
    });
  });
});
