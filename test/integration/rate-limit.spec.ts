import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { generateToken } from '../../src/auth/token-format';
import { DB_KINDS } from '../utils/test-databases';
import { GqlResponse, startTestApp, TestApp } from '../utils/test-app';

const REDIS_URL = process.env.REDIS_URL_FOR_TESTS ?? 'redis://127.0.0.1:6379';

function expectRateLimited(response: GqlResponse, retryAfterAtMost: number): void {
  expect(response.status).toBe(429);
  expect(response.body.data).toBeUndefined();
  expect(response.body.errors).toEqual([
    {
      message: 'Rate limit exceeded',
      extensions: expect.objectContaining({
        code: 'RATE_LIMIT_EXCEEDED',
        category: 'RATE_LIMIT',
        http_status: 429,
      }),
    },
  ]);
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(retryAfterAtMost);
}

describe.each(DB_KINDS)('rate limits on %s', (kind) => {
  let t: TestApp;
  const SPACE = '{ space(id: 1) { name } }';

  beforeAll(async () => {
    t = await startTestApp(kind, { RATE_LIMIT_TOKEN: '5/30s', RATE_LIMIT_ADDRESS: '1000/30s' });
    await t.load([{ type: 'space', id: 1, name: 'Limited' }]);
  });
  afterAll(() => t?.close());

  const newToken = async () => (await t.app.get(AccessTokensService).create('limited')).token;

  it('lets a token make its limit of requests, then answers 429 with Retry-After, running nothing', async () => {
    const token = await newToken();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await t.gql(SPACE, undefined, { token });
      expect(response.body).toEqual({ data: { space: { name: 'Limited' } } });
      expect(response.headers.get('ratelimit-limit')).toBe('5');
      expect(response.headers.get('ratelimit-policy')).toBe('5;w=30');
      remaining.push(response.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    t.recorder.queries.length = 0;
    expectRateLimited(await t.gql(SPACE, undefined, { token }), 30);
    expect(t.recorder.queries).toEqual([]);
  });

  it('gives every token its own budget, even from one address', async () => {
    const [first, second] = [await newToken(), await newToken()];
    for (let i = 0; i < 5; i++)
      expect((await t.gql(SPACE, undefined, { token: first })).status).toBe(200);
    expect((await t.gql(SPACE, undefined, { token: first })).status).toBe(429);
    for (let i = 0; i < 5; i++)
      expect((await t.gql(SPACE, undefined, { token: second })).status).toBe(200);
    expect((await t.gql(SPACE, undefined, { token: second })).status).toBe(429);
  });

  it('counts a request once however many aliases it holds', async () => {
    const token = await newToken();
    const aliased = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: space(id: 1) { name }`).join(' ')} }`;
    const big = await t.gql(aliased, undefined, { token });
    expect(big.status).toBe(200);
    expect(Object.keys(big.body.data)).toHaveLength(20);
    expect(big.headers.get('ratelimit-remaining')).toBe('4');
    for (let i = 0; i < 4; i++) expect((await t.gql(SPACE, undefined, { token })).status).toBe(200);
    expect((await t.gql(SPACE, undefined, { token })).status).toBe(429);
  });

  it('lets no more than the limit through when 200 requests arrive at once', async () => {
    const token = await newToken();
    const responses = await Promise.all(
      Array.from({ length: 200 }, () => t.gql(SPACE, undefined, { token })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(195);
  });

  it('limits requests without a valid token per address, refusing before any lookup once over', async () => {
    const guarded = await startTestApp(
      kind,
      { RATE_LIMIT_TOKEN: '5/30s', RATE_LIMIT_ADDRESS: '3/30s' },
      t.db,
    );
    try {
      const unknown = () => generateToken();
      for (let i = 0; i < 3; i++)
        expect((await guarded.gql(SPACE, undefined, { token: unknown() })).status).toBe(401);
      expectRateLimited(await guarded.gql(SPACE, undefined, { token: unknown() }), 30);
      guarded.recorder.queries.length = 0;
      expectRateLimited(await guarded.gql(SPACE, undefined, { token: unknown() }), 30);
      expectRateLimited(await guarded.gql(SPACE, undefined, { token: null }), 30);
      expectRateLimited(await guarded.gql(SPACE, undefined, { token: 'malformed' }), 30);
      expect(guarded.recorder.queries.filter((q) => /access_tokens/.test(q))).toEqual([]);
    } finally {
      await guarded.app.close();
    }
  });

  it('does not let junk from a shared address starve a valid token', async () => {
    const shared = await startTestApp(
      kind,
      { RATE_LIMIT_TOKEN: '50/30s', RATE_LIMIT_ADDRESS: '3/30s' },
      t.db,
    );
    try {
      const { token } = await shared.app.get(AccessTokensService).create('office');
      expect((await shared.gql(SPACE, undefined, { token })).status).toBe(200);
      for (let i = 0; i < 6; i++) await shared.gql(SPACE, undefined, { token: null });
      expect((await shared.gql(SPACE, undefined, { token: null })).status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the 1 s verified cache
      for (let i = 0; i < 5; i++)
        expect((await shared.gql(SPACE, undefined, { token })).status).toBe(200);
      // A valid token this instance has never seen still waits out the block.
      const { token: fresh } = await shared.app.get(AccessTokensService).create('new');
      expect((await shared.gql(SPACE, undefined, { token: fresh })).status).toBe(429);
    } finally {
      await shared.app.close();
    }
  });
});

describe('rate limits shared through Redis', () => {
  it('gives two instances one budget per token', async () => {
    const a = await startTestApp('sqlite', { REDIS_URL, RATE_LIMIT_TOKEN: '10/30s' });
    const b = await startTestApp('sqlite', { REDIS_URL, RATE_LIMIT_TOKEN: '10/30s' }, a.db);
    try {
      const { token } = await a.app.get(AccessTokensService).create('shared');
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++)
        statuses.push(
          (await (i % 2 === 0 ? a : b).gql('{ __typename }', undefined, { token })).status,
        );
      expect(statuses).toEqual([...Array(10).fill(200), 429, 429, 429, 429]);
      const ready = await fetch(a.url.replace('/query', '/health/ready'));
      expect(await ready.json()).toMatchObject({ checks: { rateLimitStore: 'shared' } });
      // 200 at once against a limit of 10, split over both instances: no more than 10 pass.
      const { token: burst } = await a.app.get(AccessTokensService).create('burst');
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          (i % 2 === 0 ? a : b).gql('{ __typename }', undefined, { token: burst }),
        ),
      );
      expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
      expect(responses.filter((r) => r.status === 429)).toHaveLength(190);
    } finally {
      await b.app.close();
      await a.close();
    }
  });

  it('falls back to per-instance limits while Redis is unreachable, and says so in readiness', async () => {
    const t = await startTestApp('sqlite', {
      REDIS_URL: 'redis://127.0.0.1:1',
      RATE_LIMIT_TOKEN: '3/30s',
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await t.gql('{ __typename }')).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const ready = await fetch(t.url.replace('/query', '/health/ready'));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: 'ready',
        checks: { rateLimitStore: 'degraded' },
      });
    } finally {
      await t.close();
    }
  });
});
