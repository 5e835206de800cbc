import type { Repository } from 'typeorm';
import type { TransactionRunner } from '../storage/transactions/transaction-runner';
import { AccessTokenEntity } from './access-token.entity';
import { AccessTokensService } from './access-tokens.service';
import { displayPrefixOf, generateToken, hashToken } from './token-format';

/** A promise settled from outside: the test decides when a database read answers. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * The service over one token row kept in memory, whose reads by hash the test may hold back:
 * `hold()` makes the next read wait until `release()`, answering the row as it was when read.
 */
function serviceWithOneToken() {
  const value = generateToken();
  const row: AccessTokenEntity = Object.assign(new AccessTokenEntity(), {
    id: 'token-1',
    name: 'ci',
    prefix: displayPrefixOf(value),
    tokenHash: hashToken(value),
    scopes: ['query'],
    spaceId: null,
    createdAt: Date.now() - 1_000,
    expiresAt: null,
    lastUsedAt: null,
    lastUsedFrom: null,
    replacedBy: null,
    revokedAt: null,
  });
  let held: ReturnType<typeof deferred<void>> | undefined;
  let reads = 0;
  const readStarted = deferred<void>();
  const repository = {
    findOne: async () => {
      reads++;
      const snapshot = { ...row };
      const gate = held;
      held = undefined;
      readStarted.resolve();
      if (gate) await gate.promise;
      return snapshot;
    },
    findOneByOrFail: () => Promise.resolve({ ...row }),
    update: (_where: unknown, changes: Partial<AccessTokenEntity>) => {
      if ('revokedAt' in changes && row.revokedAt !== null && !('expiresAt' in changes))
        return Promise.resolve({ affected: 0 });
      Object.assign(row, changes);
      return Promise.resolve({ affected: 1 });
    },
    insert: () => Promise.resolve({}),
  };
  const transactions = {
    run: <T>(work: (manager: unknown) => Promise<T>) => work({ getRepository: () => repository }),
  };
  const service = new AccessTokensService(
    repository as unknown as Repository<AccessTokenEntity>,
    transactions as unknown as TransactionRunner,
  );
  return {
    service,
    value,
    row,
    reads: () => reads,
    /** Holds the next read; resolves once it has begun. */
    hold() {
      const gate = deferred<void>();
      held = gate;
      return { started: readStarted.promise, release: () => gate.resolve() };
    },
  };
}

describe('AccessTokensService: a revocation during a check in flight', () => {
  let fixture: ReturnType<typeof serviceWithOneToken>;
  beforeEach(() => (fixture = serviceWithOneToken()));
  afterEach(() => fixture.service.onApplicationShutdown());

  it('serves a second check from the cache when nothing happened between (one read)', async () => {
    const { service, value } = fixture;
    await service.authenticate(value);
    await service.authenticate(value);
    expect(fixture.reads()).toBe(1);
  });

  it('refuses the token at the next check when revoke() ran while its row was being read', async () => {
    const { service, value } = fixture;
    const read = fixture.hold();
    const inFlight = service.authenticate(value);
    await read.started;
    expect(await service.revoke('token-1')).toBe(true);
    read.release();
    // Valid when it was read: this request passes, but the stale row is not cached.
    await expect(inFlight).resolves.toMatchObject({ id: 'token-1' });
    await expect(service.authenticate(value)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(fixture.reads()).toBe(2);
    expect(service.wasValidRecently(value)).toBe(false);
  });

  it('refuses the token at the next check when rotate() with no grace ran during the read', async () => {
    const { service, value } = fixture;
    const read = fixture.hold();
    const inFlight = service.authenticate(value);
    await read.started;
    const rotated = await service.rotate('token-1', 0);
    expect(rotated?.previous.id).toBe('token-1');
    read.release();
    await inFlight;
    await expect(service.authenticate(value)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('does not cache a row read before a rotation with a grace: the grace end is read again', async () => {
    const { service, value, row } = fixture;
    const read = fixture.hold();
    const inFlight = service.authenticate(value);
    await read.started;
    await service.rotate('token-1', 50);
    read.release();
    await inFlight;
    expect(row.expiresAt).not.toBeNull();
    await service.authenticate(value);
    expect(fixture.reads()).toBe(2);
    await new Promise((done) => setTimeout(done, 60));
    // The check above cached the row with its grace end, so the end holds even from the cache.
    await expect(service.authenticate(value)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('caches again for checks that begin after the revocation was forgotten', async () => {
    const { service, value, row } = fixture;
    const read = fixture.hold();
    const inFlight = service.authenticate(value);
    await read.started;
    await service.revoke('token-1');
    read.release();
    await inFlight;
    // Brought back by hand (as if un-revoked): a later check caches as usual.
    row.revokedAt = null;
    await service.authenticate(value);
    await service.authenticate(value);
    expect(fixture.reads()).toBe(2);
  });
});
