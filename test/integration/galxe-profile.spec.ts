import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { IngestService } from '../../src/ingest/ingest.service';
import { SpacesService } from '../../src/spaces/spaces.service';
import { startTestApp, TestApp } from '../utils/test-app';
import { DB_KINDS, DbKind } from '../utils/test-databases';

/*
 * The `galxe` schema profile (docs/galxe-compatibility.md), with documents written the way Galxe's
 * docs and public clients write them (sources in /docs/galxe-compatibility.md), on both databases.
 */

/** Galxe's own example, quest/graphql-api/api-examples.mdx (Galxe/docs), verbatim. */
const CAMPAIGN_LIST = `query CampaignList(
  $id: Int
  $alias: String
  $campaignInput: ListCampaignInput!
) {
  space(id: $id, alias: $alias) {
    id
    name
    alias
    campaigns(input: $campaignInput) {
      pageInfo {
        endCursor
        hasNextPage
      }
      list {
        id
        name
      }
    }
  }
}`;

/** Its variables, as the example sends them (every GamificationType in `types`). */
const campaignListVariables = (after: string) => ({
  alias: 'bnbchain',
  campaignInput: {
    forAdmin: false,
    first: 2,
    after,
    excludeChildren: true,
    gasTypes: null,
    credSources: null,
    rewardTypes: null,
    chains: null,
    statuses: null,
    listType: 'Newest',
    types: [
      'Drop',
      'MysteryBox',
      'Forge',
      'MysteryBoxWR',
      'Airdrop',
      'ExternalLink',
      'OptIn',
      'OptInEmail',
      'PowahDrop',
      'Parent',
      'Oat',
      'Bounty',
      'Token',
      'DiscordRole',
      'Mintlist',
      'Points',
      'PointsMysteryBox',
    ],
    searchString: null,
  },
});

/** quest/graphql-api/claim-integrate.mdx: the SpaceLeaderboard operation and its variables. */
const SPACE_LEADERBOARD = `query SpaceLeaderboard($id: Int!, $after: String, $pageSize: Int, $order: LoyaltyPointsRankOrder, $seasonId: Int, $cursorAfter: String, $cursorBefore: String) {
  space(id: $id) {
    id
    name
    loyaltyPointsRanks(first: $pageSize, after: $after, order: $order, sprintId: $seasonId, cursorAfter: $cursorAfter, cursorBefore: $cursorBefore) {
      pageInfo { startCursor endCursor hasNextPage hasPreviousPage __typename }
      totalCount
      list { rank points address { username address avatar __typename } __typename }
      __typename
    }
    __typename
  }
}`;

/** snapshot-labs/snapshot-strategies (galxe-loyalty-points): a space by alias, `String!`. */
const SPACE_BY_ALIAS = `query SpaceByAlias($alias: String!) {
  space(alias: $alias) { id name alias loyaltyPointsRanks { totalCount } }
}`;

/** A public client's space lookup (`$id:Int,$alias:String`), without its social field. */
const SPACE_INFO = 'query($id:Int,$alias:String){ space(id:$id,alias:$alias){ id name alias } }';

/** leaderboard-data-by-user.mdx: one address's points, the space by `$id: Int`. */
const ADDRESS_POINTS = `query ($id: Int, $address: String!) {
  space(id: $id) { id addressLoyaltyPoints(address: $address) { id points rank } }
}`;

/** A public client's root list (`$ci:ListCampaignInput!`), the fields our data answers. */
const ROOT_CAMPAIGNS = `query($ci:ListCampaignInput!){
  campaigns(input:$ci){totalCount pageInfo{endCursor hasNextPage}
  list{id name status type startTime endTime cap
    space{id alias name}
    participants{participantsCount}
  }}
}`;

/** A Relay-style client: edges and cursors. */
const RELAY_CAMPAIGNS = `query Campaigns($input: ListCampaignInput!) {
  campaigns(input: $input) { edges { node { id name status } cursor } pageInfo { hasNextPage endCursor } }
}`;

/** munris-vlad/wallet-checker (checkers/galxe.js): Galxe's social graph and the caller's session. */
const SPACE_ACCESS = `query SpaceAccessQuery($id: Int, $alias: String, $address: String!) {
  space(id: $id, alias: $alias) {
    id
    isFollowing
    discordGuildID
    discordGuildInfo
    status
    isAdmin(address: $address)
    unclaimedBackfillLoyaltyPoints(address: $address)
    addressLoyaltyPoints(address: $address) { id points rank }
  }
}`;

const seconds = (iso: string) => Date.parse(iso) / 1000;

const SPACE = 40;
const QUAI = 41;
const HIDDEN = 42;

/** Space 40's quests; every GamificationType of the example's list but `social`. */
const QUESTS = [
  {
    id: 'q-drop',
    name: 'Galxe Drop Week',
    status: 'Active',
    questType: 'Drop',
    startTime: '2026-02-01T00:00:00Z',
    endTime: '2026-03-01T00:00:00Z',
    cap: 500,
  },
  {
    id: 'q-points',
    name: 'Points Sprint',
    status: 'Expired',
    questType: 'Points',
    startTime: '2026-01-01T00:00:00Z',
    endTime: '2026-01-15T00:00:00Z',
  },
  {
    id: 'q-oat',
    name: 'OAT mint',
    status: 'NotStarted',
    questType: 'Oat',
    startTime: '2026-04-01T00:00:00Z',
  },
  {
    id: 'q-social',
    name: 'Follow on X',
    status: 'Active',
    questType: 'social',
    startTime: '2026-03-10T00:00:00Z',
  },
  { id: 'q-draft', name: 'Draft idea', status: 'Draft' },
  {
    id: 'q-old',
    name: 'Old drop',
    status: 'Deleted',
    questType: 'Drop',
    startTime: '2025-12-01T00:00:00Z',
  },
];

const points = (key: string, spaceId: number, address: string, value: number, at: string) => ({
  type: 'points',
  key,
  spaceId,
  address,
  points: value,
  occurredAt: at,
});

describe.each(DB_KINDS)('the galxe profile on %s', (kind: DbKind) => {
  let t: TestApp;
  let otherSpaceToken: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { SCHEMA_PROFILE: 'galxe', RESPONSE_CACHE_MS: '0' });
    await t.load([
      {
        type: 'space',
        id: SPACE,
        name: 'BNB Chain',
        description: 'Build N Build',
        alias: 'bnbchain',
      },
      { type: 'space', id: QUAI, name: 'Quai Network', alias: 'quai' },
      { type: 'space', id: HIDDEN, name: 'Hidden', alias: 'hidden' },
      ...QUESTS.map((quest) => ({ type: 'quest', spaceId: SPACE, ...quest })),
      { type: 'quest', id: 'q-quai', spaceId: QUAI, name: 'Quai quest', status: 'Active' },
      { type: 'quest', id: 'q-hidden', spaceId: HIDDEN, name: 'Hidden quest', status: 'Active' },
      ...['0xA1', '0xB2', '0xC3'].map((address) => ({
        type: 'participation',
        questId: 'q-drop',
        address,
      })),
      { type: 'profile', address: '0xC3', username: 'carol' },
      points('c', SPACE, '0xC3', 300, '2026-01-02T00:00:00Z'),
      points('a', SPACE, '0xA1', 180, '2026-01-03T00:00:00Z'),
      points('b', SPACE, '0xB2', 180, '2026-01-04T00:00:00Z'),
      points('d', SPACE, '0xD4', 50, '2026-01-05T00:00:00Z'),
      points('h', HIDDEN, '0xA1', 7, '2026-01-05T00:00:00Z'),
    ]);
    await t.app.get(SpacesService).setPrivate(HIDDEN, true);
    otherSpaceToken = (
      await t.app.get(AccessTokensService).create('quai', ['query'], { spaceId: QUAI })
    ).token;
  });
  afterAll(() => t?.close());

  describe('answers the documents of Galxe clients', () => {
    it('CampaignList, Galxe\'s example: a space by alias, its campaigns paged from after: "-1"', async () => {
      const first = await t.gql(CAMPAIGN_LIST, campaignListVariables('-1'));
      expect(first.body).toEqual({
        data: {
          space: {
            id: '40',
            name: 'BNB Chain',
            alias: 'bnbchain',
            campaigns: {
              pageInfo: { endCursor: '1', hasNextPage: true },
              // Newest: latest start first; `social` and the quest without a type are not in `types`.
              list: [
                { id: 'q-oat', name: 'OAT mint' },
                { id: 'q-drop', name: 'Galxe Drop Week' },
              ],
            },
          },
        },
      });
      const next = await t.gql(CAMPAIGN_LIST, campaignListVariables('1'));
      expect(next.body.data.space.campaigns).toEqual({
        pageInfo: { endCursor: '3', hasNextPage: false },
        list: [
          { id: 'q-points', name: 'Points Sprint' },
          { id: 'q-old', name: 'Old drop' },
        ],
      });
    });

    it('SpaceLeaderboard with order Points and after "-1": the board, as the deprecated offsets page it', async () => {
      const variables = { id: SPACE, pageSize: 2, after: '-1', order: 'Points' };
      const first = await t.gql(SPACE_LEADERBOARD, variables);
      expect(first.body.errors).toBeUndefined();
      const board = first.body.data.space.loyaltyPointsRanks;
      expect(board).toMatchObject({
        totalCount: 4,
        pageInfo: { hasNextPage: true, hasPreviousPage: false, __typename: 'PageInfo' },
        list: [
          { rank: 1, points: 300, address: { username: 'carol', address: '0xC3', avatar: null } },
          // Equal points: the address that reached its total first ranks first (ranks are unique).
          { rank: 2, points: 180, address: { username: null, address: '0xA1' } },
        ],
        __typename: 'LoyaltyPointsRanks',
      });
      expect(first.body.data.space).toMatchObject({
        id: '40',
        name: 'BNB Chain',
        __typename: 'Space',
      });
      const second = await t.gql(SPACE_LEADERBOARD, { ...variables, after: '1' });
      expect(second.body.data.space.loyaltyPointsRanks.list).toEqual([
        {
          rank: 3,
          points: 180,
          address: { username: null, address: '0xB2', avatar: null, __typename: 'Address' },
          __typename: 'LoyaltyPointsRank',
        },
        {
          rank: 4,
          points: 50,
          address: { username: null, address: '0xD4', avatar: null, __typename: 'Address' },
          __typename: 'LoyaltyPointsRank',
        },
      ]);
      // No order is the same board.
      const unordered = await t.gql(SPACE_LEADERBOARD, { id: SPACE, pageSize: 2, after: '-1' });
      expect(unordered.body).toEqual(first.body);
    });

    it('a space by alias declared `String!`, in any letter case', async () => {
      for (const alias of ['bnbchain', 'BNBChain']) {
        expect((await t.gql(SPACE_BY_ALIAS, { alias })).body).toEqual({
          data: {
            space: {
              id: '40',
              name: 'BNB Chain',
              alias: 'bnbchain',
              loyaltyPointsRanks: { totalCount: 4 },
            },
          },
        });
      }
    });

    it('a space by `$id: Int`, and by `$alias: String` with the id variable left out', async () => {
      expect((await t.gql(SPACE_INFO, { id: QUAI })).body).toEqual({
        data: { space: { id: '41', name: 'Quai Network', alias: 'quai' } },
      });
      expect((await t.gql(SPACE_INFO, { alias: 'Quai' })).body).toEqual({
        data: { space: { id: '41', name: 'Quai Network', alias: 'quai' } },
      });
      // A public client sends both for one space.
      expect((await t.gql(SPACE_INFO, { id: QUAI, alias: 'Quai' })).body).toEqual({
        data: { space: { id: '41', name: 'Quai Network', alias: 'quai' } },
      });
      expect((await t.gql(ADDRESS_POINTS, { id: SPACE, address: '0xb2' })).body).toEqual({
        data: {
          space: {
            id: '40',
            addressLoyaltyPoints: { id: expect.any(String), points: 180, rank: 3 },
          },
        },
      });
    });

    it('the root campaigns of input.spaceId: a status filter, times in Unix seconds, participants', async () => {
      const response = await t.gql(ROOT_CAMPAIGNS, {
        ci: { first: 20, after: '-1', spaceId: '40', statuses: ['Active'] },
      });
      const space = { id: '40', alias: 'bnbchain', name: 'BNB Chain' };
      expect(response.body).toEqual({
        data: {
          campaigns: {
            totalCount: 2,
            pageInfo: { endCursor: '1', hasNextPage: false },
            list: [
              {
                id: 'q-social',
                name: 'Follow on X',
                status: 'Active',
                type: 'social',
                startTime: seconds('2026-03-10T00:00:00Z'),
                endTime: null,
                cap: null,
                space,
                participants: { participantsCount: 0 },
              },
              {
                id: 'q-drop',
                name: 'Galxe Drop Week',
                status: 'Active',
                type: 'Drop',
                startTime: seconds('2026-02-01T00:00:00Z'),
                endTime: seconds('2026-03-01T00:00:00Z'),
                cap: 500,
                space,
                participants: { participantsCount: 3 },
              },
            ],
          },
        },
      });
    });

    it('edges and cursors, Earliest first, ids, types and searchString as filters', async () => {
      const list = async (input: Record<string, unknown>) => {
        const response = await t.gql(RELAY_CAMPAIGNS, { input: { spaceId: SPACE, ...input } });
        expect(response.body.errors).toBeUndefined();
        return response.body.data.campaigns;
      };
      expect(await list({ listType: 'Earliest', first: 3 })).toEqual({
        edges: [
          { node: { id: 'q-old', name: 'Old drop', status: 'Deleted' }, cursor: '0' },
          { node: { id: 'q-points', name: 'Points Sprint', status: 'Expired' }, cursor: '1' },
          { node: { id: 'q-drop', name: 'Galxe Drop Week', status: 'Active' }, cursor: '2' },
        ],
        pageInfo: { hasNextPage: true, endCursor: '2' },
      });
      // Quests without a start come last in either order.
      const last = await list({ listType: 'Earliest', after: '4' });
      expect(last.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(['q-draft']);
      const ids = async (input: Record<string, unknown>) =>
        (await list(input)).edges.map((edge: { node: { id: string } }) => edge.node.id);
      expect(await ids({ ids: ['q-draft', 'q-points', 'q-quai'] })).toEqual([
        'q-points',
        'q-draft',
      ]);
      expect(await ids({ types: ['Drop'], status: 'Deleted' })).toEqual(['q-old']);
      expect(await ids({ searchString: 'DROP' })).toEqual(['q-drop', 'q-old']);
      expect(await ids({ searchString: 'nothing like it' })).toEqual([]);
      expect(await list({ after: '99' })).toEqual({
        edges: [],
        pageInfo: { hasNextPage: false, endCursor: null },
      });
    });
  });

  describe('refuses, clearly', () => {
    const refusal = (message: string, code = 'INVALID_ARGUMENT') =>
      expect.objectContaining({ message, extensions: expect.objectContaining({ code }) });

    it('order GalxeID: this service keeps no Galxe IDs', async () => {
      // A public client's literal: `loyaltyPointsRanks(first: 1000 ${after} order: GalxeID)`.
      const response = await t.gql(
        `query ($id: Int) { space(id: $id) {
        loyaltyPointsRanks(first: 1000 after: "-1" order: GalxeID) {
          pageInfo { endCursor hasNextPage } totalCount list { points address { avatar address } } } } }`,
        { id: SPACE },
      );
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ space: { loyaltyPointsRanks: null } });
      expect(response.body.errors).toEqual([
        refusal(
          'order GalxeID is not supported: this service keeps no Galxe IDs to sort by; use Points (the default)',
        ),
      ]);
    });

    it('space with an id and an alias of two spaces, or neither', async () => {
      const both = await t.gql(SPACE_INFO, { id: SPACE, alias: 'quai' });
      expect(both.body.data).toEqual({ space: null });
      expect(both.body.errors).toEqual([
        refusal(
          `space(id: 40, alias: "quai") names two spaces: space 40's alias is "bnbchain"; give ` +
            'id or alias, or both of one space',
        ),
      ]);
      // The alias of a private space the token may not read is not told apart from any other.
      const asOther = { token: otherSpaceToken };
      const hidden = await t.gql(SPACE_INFO, { id: SPACE, alias: 'hidden' }, asOther);
      expect(hidden.body.errors[0].message).toBe(
        `space(id: 40, alias: "hidden") names two spaces: space 40's alias is "bnbchain"; give ` +
          'id or alias, or both of one space',
      );
      // An id the token may not read is not found, whatever the alias.
      const unreadable = await t.gql(SPACE_INFO, { id: HIDDEN, alias: 'hidden' }, asOther);
      expect(unreadable.body.errors).toEqual([refusal('Space not found', 'SPACE_NOT_FOUND')]);
      const neither = await t.gql(SPACE_INFO, {});
      expect(neither.body.data).toEqual({ space: null });
      expect(neither.body.errors).toEqual([refusal('Give space one of id or alias')]);
    });

    it('an input field asking what our data cannot answer, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ chains: ['ETHEREUM'] }, 'chains is not supported: quests here have no chains'],
        [{ forAdmin: true }, 'forAdmin is not supported: this API has no admin view'],
        [
          { rewardTypes: ['Points'] },
          'rewardTypes is not supported: quests here record no rewards',
        ],
        [
          { recommendByUser: 'user-1' },
          'recommendByUser is not supported: there are no recommendations here',
        ],
        // The trending client's variables (isRecurring false and rewardTypes [] are fine).
        [
          { listType: 'Trending', first: 30, after: '-1', isRecurring: false, rewardTypes: [] },
          'listType Trending is not supported: nothing here measures trends; use Newest or Earliest',
        ],
      ];
      for (const [input, message] of cases) {
        const response = await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: '40', ...input } });
        expect(response.body).toEqual({ data: null, errors: [refusal(message)] });
      }
      const nested = await t.gql(CAMPAIGN_LIST, {
        alias: 'bnbchain',
        campaignInput: { gasTypes: ['Gasless'] },
      });
      expect(nested.body.data).toEqual({ space: null });
      expect(nested.body.errors).toEqual([
        refusal('gasTypes is not supported: quests here have no gas type'),
      ]);
    });

    it('the root campaigns without input.spaceId, and a page size below 1', async () => {
      expect((await t.gql(ROOT_CAMPAIGNS, { ci: { first: 10 } })).body.errors).toEqual([
        refusal(
          'campaigns needs input.spaceId: quests are listed one space at a time (or use space(id:) { campaigns(input:) })',
        ),
      ]);
      expect((await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: 'bnbchain' } })).body.errors).toEqual([
        refusal("input.spaceId must be a space's number id, from 1 to 2147483647"),
      ]);
      expect(
        (await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: '40', first: 0 } })).body.errors,
      ).toEqual([refusal('Invalid page size')]);
      expect(
        (await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: '40', after: 'abc' } })).body.errors,
      ).toEqual([refusal('Invalid cursor', 'INVALID_CURSOR')]);
    });

    it('a social or session field, at validation, before anything runs', async () => {
      const response = await t.gql(SPACE_ACCESS, { alias: 'bnbchain', address: '0xA1' });
      expect(response.status).toBe(400);
      expect(response.body.data).toBeUndefined();
      expect(response.body.errors.map((error) => error.message)).toEqual(
        expect.arrayContaining([
          'Cannot query field "isFollowing" on type "Space".',
          'Cannot query field "discordGuildID" on type "Space".',
          'Cannot query field "isAdmin" on type "Space".',
        ]),
      );
      expect(response.body.errors[0].extensions).toMatchObject({
        code: 'GRAPHQL_VALIDATION_FAILED',
      });
      const followers = await t.gql(
        'query($id:Int,$alias:String){ space(id:$id,alias:$alias){ id name alias followersCount } }',
        { id: SPACE },
      );
      expect(followers.status).toBe(400);
      expect(followers.body.errors[0].message).toBe(
        'Cannot query field "followersCount" on type "Space".',
      );
      // Galxe's documented leaderboard selects identities this service does not keep.
      const identities = await t.gql(
        'query ($id: Int!) { space(id: $id) { loyaltyPointsRanks { list { address { solanaAddress twitterUserName } } } } }',
        { id: SPACE },
      );
      expect(identities.status).toBe(400);
    });

    it("a private space to another space's token, by alias and through the root campaigns", async () => {
      const asOther = { token: otherSpaceToken };
      const byAlias = await t.gql(SPACE_BY_ALIAS, { alias: 'hidden' }, asOther);
      expect(byAlias.body.data).toEqual({ space: null });
      expect(byAlias.body.errors).toEqual([refusal('Space not found', 'SPACE_NOT_FOUND')]);
      const listed = await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: String(HIDDEN) } }, asOther);
      expect(listed.body).toEqual({
        data: null,
        errors: [refusal('Space not found', 'SPACE_NOT_FOUND')],
      });
      // A deployment token reads it.
      const own = await t.gql(ROOT_CAMPAIGNS, { ci: { spaceId: String(HIDDEN) } });
      expect(own.body.data.campaigns.list.map((c: { id: string }) => c.id)).toEqual(['q-hidden']);
      expect((await t.gql(SPACE_BY_ALIAS, { alias: 'nobody' })).body.errors).toEqual([
        refusal('Space not found', 'SPACE_NOT_FOUND'),
      ]);
    });

    it('a time past what an Int of Unix seconds holds, on that field only', async () => {
      await t.load([
        {
          type: 'quest',
          id: 'q-far',
          spaceId: QUAI,
          name: 'Far future',
          status: 'NotStarted',
          startTime: '2040-01-01T00:00:00Z',
        },
      ]);
      const response = await t.gql(ROOT_CAMPAIGNS, {
        ci: { spaceId: String(QUAI), listType: 'Earliest' },
      });
      expect(
        response.body.data.campaigns.list.map((c: { id: string; startTime: unknown }) => [
          c.id,
          c.startTime,
        ]),
      ).toEqual([
        ['q-far', null],
        ['q-quai', null],
      ]);
      expect(response.body.errors).toEqual([
        expect.objectContaining({
          message:
            'startTime of quest q-far (2040-01-01T00:00:00.000Z) is past what an Int of Unix seconds holds (until 2038-01-19T03:14:07Z): read it as ISO 8601 through quest(id:)',
          path: ['campaigns', 'list', 0, 'startTime'],
        }),
      ]);
    });
  });

  describe('space aliases from records', () => {
    it('refuses an alias another space holds, record by record, writing nothing of that record', async () => {
      const outcomes = await t.load([
        { type: 'space', id: 43, name: 'Copycat', alias: 'bnbchain' },
        { type: 'space', id: 44, name: 'Fresh', alias: 'fresh' },
        { type: 'space', id: 45, name: 'Also fresh', alias: 'fresh' },
        { type: 'space', id: SPACE, alias: 'bnbchain' },
      ]);
      expect(outcomes).toEqual([
        {
          status: 'refused',
          field: 'alias',
          reason: 'alias "bnbchain" is taken by another space',
        },
        { status: 'accepted' },
        // The same batch's earlier record holds it now.
        {
          status: 'refused',
          field: 'alias',
          reason: 'alias "fresh" is taken by another space',
        },
        { status: 'accepted' },
      ]);
      const spaces = t.app.get(SpacesService);
      expect(await spaces.findSpace(43)).toBeNull();
      expect(await spaces.findSpace(45)).toBeNull();
      expect((await t.gql(SPACE_INFO, { alias: 'fresh' })).body.data.space).toEqual({
        id: '44',
        name: 'Fresh',
        alias: 'fresh',
      });
    });

    it('gives an alias two writers claim at once to one of them, refusing the other', async () => {
      const ingest = t.app.get(IngestService);
      const claim = (id: number) =>
        ingest.applyRecords([{ type: 'space', id, name: `Claimant ${id}`, alias: 'contested' }]);
      const outcomes = (await Promise.all([claim(47), claim(48)])).flat();
      expect(outcomes).toEqual(
        expect.arrayContaining([
          { status: 'accepted' },
          {
            status: 'refused',
            field: 'alias',
            reason: 'alias "contested" is taken by another space',
          },
        ]),
      );
      const winner = outcomes[0].status === 'accepted' ? 47 : 48;
      expect((await t.gql(SPACE_INFO, { alias: 'contested' })).body.data.space).toMatchObject({
        id: String(winner),
      });
      expect(await t.app.get(SpacesService).findSpace(winner === 47 ? 48 : 47)).toBeNull();
    });

    it('clears an alias with null, and frees it for another space', async () => {
      await t.load([{ type: 'space', id: 46, name: 'Taker' }]);
      expect(await t.load([{ type: 'space', id: 44, alias: null }])).toEqual([
        { status: 'accepted' },
      ]);
      expect((await t.gql(SPACE_INFO, { id: 44 })).body.data.space).toEqual({
        id: '44',
        name: 'Fresh',
        alias: null,
      });
      expect((await t.gql(SPACE_INFO, { alias: 'fresh' })).body.errors).toEqual([
        expect.objectContaining({ message: 'Space not found' }),
      ]);
      expect(await t.load([{ type: 'space', id: 46, alias: 'fresh' }])).toEqual([
        { status: 'accepted' },
      ]);
      expect((await t.gql(SPACE_INFO, { alias: 'fresh' })).body.data.space).toMatchObject({
        id: '46',
      });
    });
  });
});

describe.each(['spec', 'extended'])('the same documents under the %s profile', (profile) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { SCHEMA_PROFILE: profile });
    await t.load([
      { type: 'space', id: SPACE, name: 'BNB Chain', alias: 'bnbchain' },
      points('c', SPACE, '0xC3', 300, '2026-01-02T00:00:00Z'),
    ]);
  });
  afterAll(() => t?.close());

  it.each([
    [
      'CampaignList',
      CAMPAIGN_LIST,
      campaignListVariables('-1'),
      'Unknown type "ListCampaignInput".',
    ],
    [
      'SpaceLeaderboard',
      SPACE_LEADERBOARD,
      { id: SPACE, pageSize: 2, after: '-1', order: 'Points' },
      'Unknown type "LoyaltyPointsRankOrder".',
    ],
    [
      'a space by alias',
      SPACE_BY_ALIAS,
      { alias: 'bnbchain' },
      'Unknown argument "alias" on field "Query.space".',
    ],
    [
      'a space by $id: Int',
      SPACE_INFO,
      { id: SPACE },
      'Variable "$id" of type "Int" used in position expecting type "Int!".',
    ],
    [
      'the root campaigns',
      ROOT_CAMPAIGNS,
      { ci: { spaceId: '40' } },
      'Unknown type "ListCampaignInput".',
    ],
  ])('refuses %s at validation', async (_name, document, variables, message) => {
    const response = await t.gql(document, variables);
    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors.map((error) => error.message)).toContain(message);
    expect(response.body.errors[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('still answers the space by its Int! id, without an alias field', async () => {
    expect((await t.gql('{ space(id: 40) { id name } }')).body).toEqual({
      data: { space: { id: '40', name: 'BNB Chain' } },
    });
    const alias = await t.gql('{ space(id: 40) { alias } }');
    expect(alias.body.errors[0].message).toBe('Cannot query field "alias" on type "Space".');
  });
});
