import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

// A page's addresses are loaded with the page, in one lookup, when the query selects them: through
// `list`, `edges.node`, fragments, the root `spaceLoyaltyPointsRanks` and `addressLoyaltyPoints`.
describe.each(DB_KINDS)("a page's addresses on %s", (kind) => {
  let t: TestApp;

  async function query(text: string) {
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': t.token },
      body: JSON.stringify({ query: text }),
    });
    const body = (await response.json()) as { data: any; errors?: unknown };
    expect(body.errors).toBeUndefined();
    return body.data;
  }

  /** Statements a request ran against profiles. */
  async function profileReads(text: string) {
    t.recorder.queries.length = 0;
    const data = await query(text);
    return { data, reads: t.recorder.queries.filter((q) => /FROM [`"]?profiles/.test(q)) };
  }

  const ADA = '0xAdA0000000000000000000000000000000000001';
  const BOB = '0xb0b0000000000000000000000000000000000002';
  const NEW = '0x00000000000000000000000000000000000000Ff';
  const expected = [
    { rank: 1, address: { id: ADA.toLowerCase(), address: ADA, username: 'ada', avatar: null } },
    { rank: 2, address: { id: BOB, address: BOB, username: 'bob', avatar: 'https://x/b.png' } },
    // An address whose profile row has no name: its first spelling, no username.
    { rank: 3, address: { id: NEW.toLowerCase(), address: NEW, username: null, avatar: null } },
  ];

  beforeAll(async () => {
    // No response cache: every request below runs.
    t = await startTestApp(kind, { RESPONSE_CACHE_MS: '0' });
    await t.load([
      { type: 'space', id: 1, name: 'Addresses' },
      ...[ADA, BOB, NEW].map((address, i) => ({
        type: 'points',
        key: `a${i}`,
        spaceId: 1,
        address,
        points: 30 - i * 10,
        occurredAt: '2026-02-01T00:00:00Z',
      })),
      { type: 'profile', address: ADA, username: 'ada' },
      { type: 'profile', address: BOB, username: 'bob', avatar: 'https://x/b.png' },
    ]);
  });
  afterAll(() => t?.close());

  const FIELDS = 'address { id address username avatar }';

  it('fills list, edges and both at once, from one profiles lookup at most', async () => {
    const { data, reads } = await profileReads(`{ space(id: 1) { loyaltyPointsRanks {
      list { rank ${FIELDS} } edges { node { rank ${FIELDS} } } } } }`);
    const page = data.space.loyaltyPointsRanks;
    expect(page.list).toEqual(expected);
    expect(page.edges.map((edge: { node: unknown }) => edge.node)).toEqual(expected);
    expect(reads.length).toBeLessThanOrEqual(1);
  });

  it('fills them through edges alone, and under aliases', async () => {
    const data = await query(`{ space(id: 1) { board: loyaltyPointsRanks {
      edges { entry: node { rank who: address { id address username avatar } } } } } }`);
    expect(
      data.space.board.edges.map(({ entry }: { entry: { rank: number; who: unknown } }) => ({
        rank: entry.rank,
        address: entry.who,
      })),
    ).toEqual(expected);
  });

  it('fills them through named and inline fragments', async () => {
    const data = await query(`{ space(id: 1) { loyaltyPointsRanks { ...Page } } }
      fragment Page on LoyaltyPointsRanks { list { rank ... on LoyaltyPointsRank { ...Who } } }
      fragment Who on LoyaltyPointsRank { ${FIELDS} }`);
    expect(data.space.loyaltyPointsRanks.list).toEqual(expected);
  });

  it('fills them on the root page and on one address', async () => {
    const data = await query(`{
      spaceLoyaltyPointsRanks(spaceId: 1) { list { rank ${FIELDS} } }
      space(id: 1) { one: addressLoyaltyPoints(address: "${BOB.toUpperCase().replace('0X', '0x')}") { rank ${FIELDS} } }
    }`);
    expect(data.spaceLoyaltyPointsRanks.list).toEqual(expected);
    expect(data.space.one).toEqual(expected[1]);
  });

  it('reads no profile for a page that does not ask for addresses', async () => {
    // Profiles read for pages are reused for 500 ms: wait them out, so a read would show.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const { data, reads } = await profileReads(
      `{ space(id: 1) { loyaltyPointsRanks { list { rank points } edges { cursor } } } }`,
    );
    expect(data.space.loyaltyPointsRanks.list).toHaveLength(3);
    expect(reads).toEqual([]);
    // The same page with addresses reads them, once for the whole page.
    const withAddresses = await profileReads(
      `{ space(id: 1) { loyaltyPointsRanks { list { rank address { username } } } } }`,
    );
    expect(withAddresses.reads).toHaveLength(1);
  });
});
