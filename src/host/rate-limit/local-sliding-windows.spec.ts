import { performance } from 'node:perf_hooks';
import { LocalSlidingWindows } from './local-sliding-windows';

describe('LocalSlidingWindows', () => {
  let clock: number;
  let wall: number;
  let windows: LocalSlidingWindows;

  beforeEach(() => {
    clock = 1_000_000;
    wall = Date.parse('2026-01-01T00:00:00Z');
    jest.spyOn(performance, 'now').mockImplementation(() => clock);
    jest.spyOn(Date, 'now').mockImplementation(() => wall);
    windows = new LocalSlidingWindows();
  });

  afterEach(() => {
    windows.close();
    jest.restoreAllMocks();
  });

  const spend = (key = 'token:t:query') => windows.increment(key, 1_000, 2);

  it('counts hits in a sliding window and refuses past the limit without counting', () => {
    expect(spend()).toMatchObject({ totalHits: 1, isBlocked: false });
    clock += 400;
    expect(spend()).toMatchObject({ totalHits: 2, isBlocked: false });
    clock += 100;
    // The oldest hit expires 500 ms from now.
    expect(spend()).toEqual({
      totalHits: 3,
      isBlocked: true,
      timeToExpire: 1,
      timeToBlockExpire: 1,
    });
    expect(spend()).toMatchObject({ totalHits: 3, isBlocked: true });
    clock += 500; // the first hit has expired, the second is still counted
    expect(spend()).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(spend('token:other:query')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('is not held by a wall clock stepped back', () => {
    spend();
    spend();
    expect(spend().isBlocked).toBe(true);
    wall -= 60 * 60_000; // NTP steps the wall clock back an hour
    clock += 1_001;
    expect(spend()).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('gives back the newest hit still counted, never below none', () => {
    spend();
    clock += 400;
    spend();
    expect(spend().isBlocked).toBe(true);
    expect(windows.release('token:t:query')).toBe(true);
    // Room for one again; the oldest hit still decides when the next room comes.
    expect(spend()).toMatchObject({ totalHits: 2, isBlocked: false });
    expect(spend()).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    clock += 2_000; // both hits have expired: nothing left to give back
    expect(windows.release('token:t:query')).toBe(false);
    expect(windows.release('never spent')).toBe(false);
    expect(spend()).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('expires hits in order under a large limit, compacting its log on the way', () => {
    for (let i = 0; i < 5_000; i++) {
      expect(windows.increment('k', 1_000, 10_000).isBlocked).toBe(false);
      clock += 0.5;
    }
    // 2,500 ms have passed: the 1,999 hits of the last second count, and this one.
    expect(windows.increment('k', 1_000, 10_000).totalHits).toBe(2_000);
  });
});
