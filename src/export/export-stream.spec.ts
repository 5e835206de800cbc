import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BoardCsvRow } from '../common/csv';
import type { BoardExport } from './board-export.service';
import { exportStream } from './export-stream';

/** A board of `pages` pages of two rows, recording how far it was read and whether it closed. */
function fakeBoard(pages: number) {
  const state = { read: 0, closed: 0, finished: false };
  const board: BoardExport = {
    board: { spaceId: 1, sprintId: 0 },
    asOf: new Date(0),
    entries: pages * 2,
    close: () => {
      state.closed++;
      return Promise.resolve();
    },
    async *pages(): AsyncGenerator<BoardCsvRow[]> {
      try {
        for (let p = 0; p < pages; p++) {
          state.read++;
          await sleep(1);
          yield [1, 2].map((i) => ({
            rank: p * 2 + i,
            address: `0x${p}${i}`,
            username: i === 1 ? `user, ${p}` : null,
            points: 100 - p,
          }));
        }
        state.finished = true;
      } finally {
        await board.close();
      }
    },
  };
  return { board, state };
}

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  await pipeline(
    stream,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out += chunk.toString();
        done();
      },
    }),
  );
  return out;
}

describe('exportStream', () => {
  it('writes CSV with its header and NDJSON without, every row once, then closes the board', async () => {
    const csv = fakeBoard(2);
    expect(await text(exportStream(csv.board, 'csv'))).toBe(
      'rank,address,username,points\n1,0x01,"user, 0",100\n2,0x02,,100\n3,0x11,"user, 1",99\n4,0x12,,99\n',
    );
    expect(csv.state).toMatchObject({ read: 2, finished: true });
    expect(csv.state.closed).toBeGreaterThanOrEqual(1);
    const ndjson = fakeBoard(1);
    expect(await text(exportStream(ndjson.board, 'ndjson'))).toBe(
      '{"rank":1,"address":"0x01","username":"user, 0","points":100}\n' +
        '{"rank":2,"address":"0x02","username":null,"points":100}\n',
    );
  });

  it('answers an empty board with the CSV header alone', async () => {
    expect(await text(exportStream(fakeBoard(0).board, 'csv'))).toBe(
      'rank,address,username,points\n',
    );
  });

  it('stops reading the board as soon as it is destroyed (the client went away)', async () => {
    const { board, state } = fakeBoard(10_000);
    const stream = exportStream(board, 'csv');
    await new Promise((resolve) => stream.once('data', resolve));
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    await sleep(20);
    const readThen = state.read;
    await sleep(50);
    expect(state.read).toBe(readThen);
    expect(state.read).toBeLessThan(100);
    expect(state.finished).toBe(false);
    expect(state.closed).toBeGreaterThanOrEqual(1);
  });

  it('closes a board whose stream is destroyed before it was ever read', async () => {
    const { board, state } = fakeBoard(3);
    const stream = exportStream(board, 'csv');
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(state.read).toBe(0);
    expect(state.closed).toBe(1);
  });

  it('ends, and closes the board, when nobody ever reads it', async () => {
    const { board, state } = fakeBoard(3);
    const stream = exportStream(board, 'csv', 50);
    const error = await new Promise<Error>((resolve) => stream.once('error', resolve));
    expect(error.message).toBe('The client took nothing for 50 ms');
    expect(state.read).toBe(0);
    expect(state.closed).toBe(1);
  });

  it('ends with an error, and closes the board, when its client takes nothing for the stall time', async () => {
    const { board, state } = fakeBoard(10_000);
    const stream = exportStream(board, 'csv', 100);
    stream.pause();
    stream.read(0); // starts the first read; nothing is taken after it
    const error = await new Promise<Error>((resolve) => stream.once('error', resolve));
    expect(error.message).toBe('The client took nothing for 100 ms');
    expect(state.finished).toBe(false);
    expect(state.closed).toBeGreaterThanOrEqual(1);
  });
});
