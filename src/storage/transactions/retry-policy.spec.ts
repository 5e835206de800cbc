import { backOffOrThrow, newAttempts, retryLimitOf } from './retry-policy';

const failure = (code: string, message = code) =>
  Object.assign(new Error(message), { driverError: { code, sqlMessage: message } });

/** Attempts until the policy throws: how many times a unit would have run. */
async function runsUntilThrown(errorOf: (attempt: number) => Error): Promise<number> {
  const attempts = newAttempts();
  for (let attempt = 1; ; attempt++) {
    const retried = backOffOrThrow(errorOf(attempt), attempts).then(
      () => true,
      () => false,
    );
    // Past the longest back-off (250 ms and up to 20 ms of jitter).
    await jest.advanceTimersByTimeAsync(300);
    if (!(await retried)) return attempt;
  }
}

describe('the retry policy of write transactions', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs a unit once more for each deadlock, five times in all', async () => {
    expect(await runsUntilThrown(() => failure('ER_LOCK_DEADLOCK'))).toBe(5);
  });

  it('counts lock-wait timeouts together with deadlocks, and SQLite busy errors together', async () => {
    const alternating = (a: string, b: string) => (attempt: number) => failure(attempt % 2 ? a : b);
    expect(await runsUntilThrown(alternating('ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'))).toBe(5);
    expect(await runsUntilThrown(alternating('SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT'))).toBe(20);
  });

  it('throws at once an error that is not a wait or a race', async () => {
    expect(await runsUntilThrown(() => failure('ER_NO_SUCH_TABLE'))).toBe(1);
    expect(retryLimitOf(new Error('plain'))).toBe(1);
  });

  it('runs again for a duplicate key raced in by another writer, but not for the same key twice', async () => {
    const key = (k: string) => failure('ER_DUP_ENTRY', `Duplicate entry '${k}' for key 'PRIMARY'`);
    expect(await runsUntilThrown((attempt) => key(`k${attempt}`))).toBe(20);
    expect(await runsUntilThrown(() => key('same'))).toBe(2);
  });

  it('does not tell apart keys that the server shows cut short', async () => {
    const long = 'x'.repeat(61);
    const cut = failure('ER_DUP_ENTRY', `Duplicate entry '${long}' for key 'PRIMARY'`);
    expect(await runsUntilThrown(() => cut)).toBe(20);
  });
});
