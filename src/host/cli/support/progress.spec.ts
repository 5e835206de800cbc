import type { ReadStream } from 'node:fs';
import { ImportProgress } from './progress';

describe('ImportProgress (import FILE on stderr)', () => {
  const isTTY = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
  let written: string[];
  let now: number;
  const input = { bytesRead: 0 };
  const summary = (accepted: number, duplicates = 0, refused = 0) => ({
    accepted,
    duplicates,
    refused,
  });
  const progress = (tty: boolean) => {
    Object.defineProperty(process.stderr, 'isTTY', { value: tty, configurable: true });
    return new ImportProgress(1000, input as unknown as ReadStream);
  };

  beforeEach(() => {
    written = [];
    now = Date.parse('2026-11-21T12:00:00Z');
    input.bytesRead = 0;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    if (isTTY) Object.defineProperty(process.stderr, 'isTTY', isTTY);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  });

  it('redraws one bar in place on a terminal, with notes above it and the summary last', () => {
    const bar = progress(true);
    now += 2000;
    input.bytesRead = 500;
    bar.update(summary(1500, 400, 100));
    expect(written).toEqual([
      '\r\u001b[2K[############............]  50%  2,000 records  1,000/s' +
        '  (1500 accepted, 400 duplicates, 100 refused)',
    ]);
    bar.note('line 7: points must be an integer');
    expect(written.slice(1)).toEqual(['\r\u001b[2K', 'line 7: points must be an integer\n']);
    now += 2000;
    input.bytesRead = 1000;
    bar.update(summary(3500, 400, 101));
    bar.finish(summary(3500, 400, 101));
    expect(written.slice(3)).toEqual([
      '\r\u001b[2K[########################] 100%  4,001 records  1,000/s' +
        '  (3500 accepted, 400 duplicates, 101 refused)',
      '\r\u001b[2K[########################] 100%  4,001 records  1,000/s' +
        '  (3500 accepted, 400 duplicates, 101 refused)\n',
    ]);
  });

  it('writes a line every 10 s when stderr is not a terminal (logs stay readable)', () => {
    const bar = progress(false);
    input.bytesRead = 100;
    now += 10_000;
    bar.update(summary(10));
    now += 9_999;
    bar.update(summary(20));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\[##\.{22}\]  10%  10 records  1\/s  \(10 accepted.*\n$/);
    now += 1;
    bar.update(summary(30));
    expect(written).toHaveLength(2);
    expect(written[1]).toContain('30 records');
    bar.note('line 9: unknown space 4');
    bar.finish(summary(30));
    expect(written.slice(2)).toEqual(['line 9: unknown space 4\n']);
    expect(written.join('')).not.toContain('\u001b');
  });
});
