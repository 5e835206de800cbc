import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS, DbKind } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const REDIS_URL = process.env.REDIS_URL_FOR_TESTS ?? 'redis://127.0.0.1:6379';
const PASSWORD = 'correct horse battery staple';
/** Every email and client address of this run carries it: its Redis keys are no one else's. */
const RUN = randomBytes(4).toString('hex');
let serial = 0;
const newEmail = () => `admin-${RUN}-${++serial}@example.com`;
const newAddress = () => `2001:db8:${RUN.slice(0, 4)}:${RUN.slice(4)}::${(++serial).toString(16)}`;

/** A browser at `address` (the apps trust X-Forwarded-For), talking to `app`. */
function browserAt(app: TestApp, address: string): DashboardClient {
  const client = new DashboardClient(app.url.replace('/query', ''));
  const request = client.request.bind(client);
  client.request = (path, init = {}) =>
    request(path, {
      ...init,
      headers: { ...(init.headers as object), 'x-forwarded-for': address },
    });
  return client;
}

/** A browser that has opened the sign-in form; `send` submits it once. */
async function openForm(app: TestApp, address: string) {
  const client = browserAt(app, address);
  const csrf = await client.formToken('/dashboard/sign-in');
  return {
    client,
    send: (email: string, password: string) =>
      client.request('/dashboard/sign-in', {
        method: 'POST',
        form: { _csrf: csrf, email, password },
      }),
  };
}

const signIn = async (app: TestApp, address: string, email: string, password: string) =>
  (await openForm(app, address)).send(email, password);

/** How many passwords the apps have checked since this was called. */
function countVerifications(apps: TestApp[]): () => number {
  const spies = apps.map((t) => jest.spyOn(t.app.get(AdminsService), 'verify'));
  return () => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const statusCounts = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>(
    (counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }),
    {},
  );

interface Setup {
  name: string;
  start(kind: DbKind): Promise<TestApp[]>;
}

const SETUPS: Setup[] = [
  {
    name: 'one instance, limits in memory',
    start: async (kind) => [await startTestApp(kind, { TRUST_PROXY: 'true' })],
  },
  {
    name: 'one instance, limits in Redis',
    start: async (kind) => [await startTestApp(kind, { TRUST_PROXY: 'true', REDIS_URL })],
  },
  {
    name: 'two instances sharing Redis and the database',
    start: async (kind) => {
      const first = await startTestApp(kind, { TRUST_PROXY: 'true', REDIS_URL });
      const second = await startTestApp(kind, { TRUST_PROXY: 'true', REDIS_URL }, first.db);
      return [first, second];
    },
  },
];

describe.each(DB_KINDS)('sign-in limits under concurrency on %s', (kind) => {
  describe.each(SETUPS)('$name', (setup) => {
    let apps: TestApp[];
    /** The app a request number `i` of a burst goes to: alternating when there are two. */
    const appFor = (i: number) => apps[i % apps.length];

    beforeAll(async () => {
      apps = await setup.start(kind);
    });
    afterAll(async () => {
      for (const t of apps?.slice(1) ?? []) await t.app.close();
      await apps?.[0]?.close();
    });
    afterEach(() => jest.restoreAllMocks());

    it('checks at most 10 wrong passwords of a burst of 29, and refuses the right one sent while they are checked', async () => {
      const email = newEmail();
      await apps[0].app.get(AdminsService).create(email, PASSWORD);
      const address = newAddress();
      const forms = await Promise.all(
        Array.from({ length: 30 }, (_, i) => openForm(appFor(i), address)),
      );
      const verifications = countVerifications(apps);
      let settled = 0;
      const wrong = Promise.all(
        forms.slice(0, 29).map(async (form, i) => {
          const answer = await form.send(email, `guess ${i}`);
          settled++;
          return answer;
        }),
      );
      // The 30th, right password goes once the first ten are being checked, still unanswered
      // (a wrong one waits 500 ms): those ten must already count against the account.
      await until(() => verifications() >= 10 || settled === 29, 'ten checks');
      const right = await forms[29].send(email, PASSWORD);
      const statuses = (await wrong).map((answer) => answer.status);

      expect(statusCounts(statuses)).toEqual({ 401: 10, 429: 19 });
      expect(verifications()).toBe(10);
      expect(right.status).toBe(429);
      expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(right.text).toContain('Too many sign-in attempts');
      expect(right.setCookies.some((c) => c.startsWith('lb_session='))).toBe(false);

      // The block lasts, on every instance; from another address the admin still signs in.
      for (const t of apps) expect((await signIn(t, address, email, PASSWORD)).status).toBe(429);
      expect((await signIn(apps[0], newAddress(), email, PASSWORD)).status).toBe(303);
    });

    it('signs in the right password sent first in a burst, and still checks at most 10 wrong ones', async () => {
      const email = newEmail();
      await apps[0].app.get(AdminsService).create(email, PASSWORD);
      const address = newAddress();
      const forms = await Promise.all(
        Array.from({ length: 30 }, (_, i) => openForm(appFor(i), address)),
      );
      const verifications = countVerifications(apps);
      const right = forms[0].send(email, PASSWORD);
      await until(() => verifications() >= 1, 'the first check');
      const wrong = await Promise.all(
        forms.slice(1).map((form, i) => form.send(email, `guess ${i}`)),
      );
      const signedIn = await right;

      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.get('location')).toBe('/dashboard/settings');
      expect((await forms[0].client.request('/dashboard/settings')).status).toBe(200);
      const counts = statusCounts(wrong.map((answer) => answer.status));
      expect(counts[401]).toBeLessThanOrEqual(10);
      expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(29);
      expect(verifications()).toBeLessThanOrEqual(11);
    });

    it('signs in after a few typos, and counts the right password as no failure', async () => {
      const email = newEmail();
      await apps[0].app.get(AdminsService).create(email, PASSWORD);
      const address = newAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await signIn(appFor(i), address, email, `typo ${i}`)).status);
      statuses.push((await signIn(appFor(3), address, email, PASSWORD)).status);
      expect(statuses).toEqual([401, 401, 401, 303]);
      // Seven more failures make ten: all checked, then the account is blocked here.
      const more = await Promise.all(
        Array.from({ length: 8 }, (_, i) => openForm(appFor(i), address)),
      );
      const guesses = await Promise.all(more.map((form, i) => form.send(email, `guess ${i}`)));
      expect(statusCounts(guesses.map((answer) => answer.status))).toEqual({ 401: 7, 429: 1 });
    });
  });

  afterAll(async () => {
    // Only this run's keys: other runs and other specs share the Redis.
    const redis = new Redis(REDIS_URL);
    try {
      const mine: string[] = [];
      for await (const keys of redis.scanStream({ match: 'loyalty:rl:sign-in*', count: 1000 }))
        mine.push(
          ...(keys as string[]).filter(
            (key) => key.includes(RUN) || key.includes(`${RUN.slice(0, 4)}:${RUN.slice(4)}`),
          ),
        );
      expect(mine.length).toBeGreaterThan(0); // the Redis setups did count there
      if (mine.length > 0) await redis.del(...mine);
    } finally {
      redis.disconnect();
    }
  });
});
