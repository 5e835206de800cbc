import { setTimeout as sleep } from 'node:timers/promises';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

// Distinct bodies (a comment) so that the response cache never answers: what is measured here is
// the profiles read behind the page.
let n = 0;
const page = () =>
  `{ space(id: 1) { loyaltyPointsRanks(first: 3) { list { rank address { id address username } } } } }\n# ${++n}`;

const profileReads = (t: TestApp) =>
  t.recorder.queries.filter((q) => /FROM [`"]?profiles[`"]?/i.test(q)).length;

describe.each(DB_KINDS)('profiles read for pages on %s', (kind) => {
  let t: TestApp;
  let keys = 0;
  const grant = (address: string, points: number) => ({
    type: 'points',
    key: `p${++keys}`,
    spaceId: 1,
    address,
    points,
    occurredAt: '2026-02-01T00:00:00Z',
  });
  const usernames = async (app: TestApp) =>
    (
      (await app.gql(page())).body.data.space.loyaltyPointsRanks.list as Array<{
        address: { username: string | null };
      }>
    ).map((entry) => entry.address.username);

  beforeAll(async () => {
    t = await startTestApp(kind);
    await t.load([
      { type: 'space', id: 1, name: 'Profiles' },
      { type: 'profile', address: '0xA1', username: 'alice' },
      grant('0xa1', 30),
      grant('0xb2', 20),
    ]);
  });
  afterAll(() => t?.close());

  it('reads the profiles of a page once, then serves them from memory for a short while', async () => {
    await usernames(t);
    t.recorder.queries.length = 0;
    expect(await usernames(t)).toEqual(['alice', null]);
    expect(profileReads(t)).toBe(0);
    await sleep(600);
    expect(await usernames(t)).toEqual(['alice', null]);
    expect(profileReads(t)).toBe(1);
  });

  it("shows this instance's profile writes on the next page", async () => {
    await usernames(t);
    await t.load([{ type: 'profile', address: '0xb2', username: 'bob' }]);
    expect(await usernames(t)).toEqual(['alice', 'bob']);
  });

  it("shows another instance's profile write within a second", async () => {
    const other = await startTestApp(kind, {}, t.db);
    try {
      await usernames(t);
      await other.load([{ type: 'profile', address: '0xa1', username: 'alice2' }]);
      const written = Date.now();
      let names = await usernames(t);
      while (names[0] !== 'alice2' && Date.now() - written < 1_000) {
        await sleep(20);
        names = await usernames(t);
      }
      expect(names[0]).toBe('alice2');
    } finally {
      await other.app.close();
    }
  });
});
