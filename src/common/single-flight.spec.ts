import { SingleFlight } from './single-flight';

describe('SingleFlight', () => {
  it('runs one load for concurrent callers of a key, and a new one once it landed', async () => {
    const flights = new SingleFlight<string, number>();
    let loads = 0;
    const load = () => new Promise<number>((resolve) => setImmediate(() => resolve(++loads)));
    const together = await Promise.all([
      flights.run('a', 0, load),
      flights.run('a', 0, load),
      flights.run('b', 0, load),
    ]);
    expect(together).toEqual([1, 1, 2]);
    expect(flights.size).toBe(0);
    expect(await flights.run('a', 0, load)).toBe(3);
  });

  it('does not join a flight of an earlier epoch (a write happened since it began)', async () => {
    const flights = new SingleFlight<string, string>();
    const before = flights.run('k', 1, () => new Promise((r) => setImmediate(() => r('before'))));
    const after = flights.run('k', 2, () => Promise.resolve('after'));
    expect(await Promise.all([before, after])).toEqual(['before', 'after']);
    expect(flights.size).toBe(0);
  });

  it('shares a failure with the callers of its flight only', async () => {
    const flights = new SingleFlight<string, string>();
    const failing = () =>
      new Promise<string>((_, reject) => setImmediate(() => reject(new Error('down'))));
    const [a, b] = await Promise.allSettled([
      flights.run('k', 0, failing),
      flights.run('k', 0, failing),
    ]);
    expect([a.status, b.status]).toEqual(['rejected', 'rejected']);
    expect(await flights.run('k', 0, () => Promise.resolve('up'))).toBe('up');
  });
});
