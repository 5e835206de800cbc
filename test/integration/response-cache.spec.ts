import { setTimeout as sleep } from 'node:timers/promises';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { RankIndexService } from '../../src/leaderboards/rank-index/rank-index.service';
import { SpacesService } from '../../src/spaces/spaces.service';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const TOP = `{ space(id: 1) { loyaltyPointsRanks(first: 3) { totalCount list { rank points address { id } } } } }`;

const addressOf = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;

describe.each(DB_KINDS)('the /query response cache on %s', (kind) => {
  let t: TestApp;
  let keys = 0;

  const grant = (address: string, points: number) => ({
    type: 'points',
    key: `k${++keys}`,
    spaceId: 1,
    address,
    points,
    occurredAt: '2026-02-01T00:00:00Z',
  });

  async function post(body: string, token: string | null = t.token) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== null) headers['access-token'] = token;
    const response = await fetch(t.url, { method: 'POST', headers, body });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** How often GraphQL ran `space(id)` on `app` (a cached answer runs nothing). */
  const spaceRuns = (app: TestApp) => jest.spyOn(app.app.get(SpacesService), 'requireSpace');
  let runs: jest.SpyInstance;

  const topBody = JSON.stringify({ query: TOP });
  const topOf = (text: string) => JSON.parse(text).data.space.loyaltyPointsRanks.list[0];

  beforeAll(async () => {
    t = await startTestApp(kind, { RATE_LIMIT_TOKEN: '1000/60s' });
    await t.load([{ type: 'space', id: 1, name: 'Cached' }]);
    await t.load([1, 2, 3, 4].map((i) => grant(addressOf(i), i * 10)));
    await t.app.get(RankIndexService).warm({ spaceId: 1, sprintId: 0 });
    runs = spaceRuns(t);
  });
  afterAll(() => t?.close());

  it('answers a repeated identical request with the same bytes without running it again', async () => {
    const first = await post(topBody);
    expect(first.status).toBe(200);
    runs.mockClear();
    const second = await post(topBody);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    // GraphQL was skipped: not even space(id) ran.
    expect(runs).not.toHaveBeenCalled();
    // Another body (the same query spelled differently) is its own entry.
    const other = await post(JSON.stringify({ query: `${TOP} ` }));
    expect(topOf(other.text)).toEqual(topOf(first.text));
    expect(runs).toHaveBeenCalled();
  });

  it('never shares an answer across tokens: the same body from another token runs again', async () => {
    const { token: second } = await t.app.get(AccessTokensService).create('second page');
    const first = await post(topBody);
    runs.mockClear();
    const other = await post(topBody, second);
    expect(other.status).toBe(200);
    expect(other.text).toBe(first.text);
    expect(runs).toHaveBeenCalledTimes(1);
    // Then that token has its own entry.
    runs.mockClear();
    expect((await post(topBody, second)).text).toBe(first.text);
    expect(runs).not.toHaveBeenCalled();
  });

  it('still checks the token and spends its budget on every cached answer', async () => {
    const limited = await startTestApp(kind, { RATE_LIMIT_TOKEN: '3/30s' }, t.db);
    try {
      const call = (token: string | null) =>
        fetch(limited.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token === null ? {} : { 'access-token': token }),
          },
          body: topBody,
        });
      const remaining: Array<string | null> = [];
      for (let i = 0; i < 3; i++) {
        const response = await call(limited.token);
        expect(response.status).toBe(200);
        remaining.push(response.headers.get('ratelimit-remaining'));
      }
      expect(remaining).toEqual(['2', '1', '0']);
      expect((await call(limited.token)).status).toBe(429);
      expect((await call(null)).status).toBe(401);
      // A revoked token is refused, cached answer or not (a fresh token: the other is spent).
      const tokens = limited.app.get(AccessTokensService);
      const { id, token } = await tokens.create('revoked');
      await tokens.revoke(id);
      expect((await call(token)).status).toBe(401);
    } finally {
      await limited.app.close();
    }
  });

  it("shows this instance's own write in the next answer", async () => {
    expect(topOf((await post(topBody)).text).address.id).not.toBe(addressOf(5));
    await t.load([grant(addressOf(5), 1000)]);
    expect(topOf((await post(topBody)).text)).toEqual({
      rank: 1,
      points: 1000,
      address: { id: addressOf(5) },
    });
  });

  it("shows another instance's write within a second", async () => {
    const other = await startTestApp(kind, {}, t.db);
    try {
      const before = topOf((await post(topBody)).text);
      await other.load([grant(addressOf(6), before.points + 500)]);
      const written = Date.now();
      let top = before;
      while (top.address.id !== addressOf(6) && Date.now() - written < 1000) {
        await sleep(20);
        top = topOf((await post(topBody)).text);
      }
      expect(top).toEqual({ rank: 1, points: before.points + 500, address: { id: addressOf(6) } });
    } finally {
      await other.app.close();
    }
  });

  it('never keeps an answer with errors', async () => {
    const missing = JSON.stringify({ query: '{ space(id: 999) { name } }' });
    const first = await post(missing);
    expect(JSON.parse(first.text).errors).toHaveLength(1);
    runs.mockClear();
    await post(missing);
    expect(runs).toHaveBeenCalled();
  });

  it('serves nothing older than RESPONSE_CACHE_MS', async () => {
    const short = await startTestApp(kind, { RESPONSE_CACHE_MS: '100' }, t.db);
    const shortRuns = spaceRuns(short);
    try {
      const call = () =>
        fetch(short.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': short.token },
          body: topBody,
        });
      await call();
      shortRuns.mockClear();
      await call();
      expect(shortRuns).not.toHaveBeenCalled();
      await sleep(150);
      await call();
      expect(shortRuns).toHaveBeenCalledTimes(1);
    } finally {
      await short.app.close();
    }
  });
});
