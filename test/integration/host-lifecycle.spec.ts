import { createServer } from 'node:net';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp } from '../utils/test-app';

const REDIS_URL = process.env.REDIS_URL_FOR_TESTS ?? 'redis://127.0.0.1:6379';

/** A loopback port that nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(DB_KINDS)('the host starting and stopping on %s', (kind) => {
  it('reports the rate-limit store degraded from the first readiness check when Redis never answered', async () => {
    const t = await startTestApp(kind, {
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      RATE_LIMIT_TOKEN: '3/30s',
    });
    try {
      // No request has tried the store yet.
      const ready = await fetch(t.url.replace('/query', '/health/ready'));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        checks: { database: 'up', shuttingDown: false, rateLimitStore: 'degraded' },
      });
      // Limits still hold, per instance.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.gql('{ __typename }')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await t.close();
    }
  });

  it('reports the store shared from the first readiness check when Redis answers', async () => {
    const t = await startTestApp(kind, { REDIS_URL });
    try {
      const ready = await fetch(t.url.replace('/query', '/health/ready'));
      expect(await ready.json()).toMatchObject({ checks: { rateLimitStore: 'shared' } });
    } finally {
      await t.close();
    }
  });
});
