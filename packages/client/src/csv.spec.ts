import fc from 'fast-check';
import * as service from '../../../src/common/csv.js';
import * as client from './csv.js';

// The client carries its own copy of the service's CSV so that it needs nothing of the service;
// `loyalty export` and `loyalty-client export` must still write the same bytes for the same board.
describe("the client's board CSV and the service's", () => {
  const same = (row: client.BoardCsvRow) =>
    expect(client.boardCsvLine(row)).toBe(service.boardCsvLine(row));

  it('have the same header', () => {
    expect(client.BOARD_CSV_HEADER).toBe(service.BOARD_CSV_HEADER);
  });

  it.each([
    ['plain', '0xAbC', 'alice'],
    ['no username', '0xAbC', null],
    ['empty username', '0xAbC', ''],
    ['comma', '0x1', 'a,b'],
    ['double quotes', '0x1', 'say "hi"'],
    ['newline', '0x1', 'two\nlines'],
    ['carriage return', '0x1', 'two\r\nlines'],
    ['formula', '0x1', '=HYPERLINK("x"),"boom"'],
    ['plus', '0x1', '+1'],
    ['minus', '0x1', '-1'],
    ['at', '0x1', '@SUM(A1)'],
    ['leading tab', '0x1', '\tx'],
    ['leading carriage return', '0x1', '\rx'],
    ['formula address', '=cmd|', 'x'],
    ['quoted and defused', '0x1', '-"a",b'],
    ['unicode', '0x1', 'Zoë 🚀'],
  ])('quote a row the same way: %s', (_case, address, username) => {
    same({ rank: 1, address, username, points: 5 });
  });

  it('write negative and large numbers the same way, never defused as formulas', () => {
    same({ rank: 2, address: '0x1', username: null, points: -40 });
    same({ rank: 1_000_000, address: '0x1', username: 'x', points: Number.MAX_SAFE_INTEGER });
    expect(client.boardCsvLine({ rank: 3, address: '0x1', username: null, points: -4 })).toBe(
      '3,0x1,,-4',
    );
  });

  it('agree on any row', () => {
    // Strings built mostly from the characters the quoting rules look at.
    const tricky = fc.string({
      unit: fc.oneof(
        fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', "'", ' ', 'a', '0'),
        fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
      ),
      maxLength: 12,
    });
    fc.assert(
      fc.property(
        fc.record({
          rank: fc.integer({ min: 1, max: 1_000_000 }),
          address: tricky,
          username: fc.option(tricky, { nil: null }),
          points: fc.integer(),
        }),
        (row) => client.boardCsvLine(row) === service.boardCsvLine(row),
      ),
      { numRuns: 2000 },
    );
  });
});
