import { QuestStatus } from '../../records/quest-status.enum';
import {
  DEFAULT_CAMPAIGN_PAGE,
  listCampaigns,
  ListedQuest,
  MAX_CAMPAIGN_PAGE,
} from './campaign-list';
import { ListType } from './list-type.enum';

const quest = (
  id: string,
  startTime: number | null,
  more: Partial<ListedQuest> = {},
): ListedQuest => ({
  id,
  name: `Quest ${id}`,
  status: QuestStatus.Active,
  type: null,
  startTime,
  ...more,
});

const ids = (page: { quests: ListedQuest[] }) => page.quests.map((q) => q.id);

describe('listCampaigns', () => {
  const quests = [
    quest('b', 200),
    quest('a', 200),
    quest('c', null),
    quest('d', 100),
    quest('e', 300),
  ];

  it('orders Newest (and by default) latest start first, Earliest earliest first; no start last, ties by id', () => {
    expect(ids(listCampaigns(quests, {}))).toEqual(['e', 'a', 'b', 'd', 'c']);
    expect(ids(listCampaigns(quests, { listType: ListType.Newest }))).toEqual([
      'e',
      'a',
      'b',
      'd',
      'c',
    ]);
    expect(ids(listCampaigns(quests, { listType: ListType.Earliest }))).toEqual([
      'd',
      'a',
      'b',
      'e',
      'c',
    ]);
  });

  it('pages by Galxe offsets: after is the index of the last quest seen, "-1" the start', () => {
    expect(listCampaigns(quests, { first: 2, after: '-1' })).toEqual({
      quests: [quests[4], quests[1]],
      offset: 0,
      totalCount: 5,
    });
    expect(listCampaigns(quests, { first: 2, after: '1' })).toMatchObject({
      offset: 2,
      totalCount: 5,
    });
    expect(ids(listCampaigns(quests, { first: 2, after: '3' }))).toEqual(['c']);
    expect(ids(listCampaigns(quests, { after: '' }))).toHaveLength(5);
    expect(ids(listCampaigns(quests, { after: '40' }))).toEqual([]);
  });

  it('serves 20 by default and at most 100; refuses a page size below 1 and a malformed after', () => {
    const many = Array.from({ length: 150 }, (_, i) => quest(`q${String(i).padStart(3, '0')}`, i));
    expect(listCampaigns(many, {}).quests).toHaveLength(DEFAULT_CAMPAIGN_PAGE);
    expect(listCampaigns(many, { first: 1000 }).quests).toHaveLength(MAX_CAMPAIGN_PAGE);
    expect(() => listCampaigns(many, { first: 0 })).toThrow('Invalid page size');
    for (const after of ['-2', 'abc', '1.5', 'MQ=='])
      expect(() => listCampaigns(many, { after })).toThrow('Invalid cursor');
  });

  it('narrows by each filter given, an empty list filtering nothing', () => {
    const mixed = [
      quest('drop', 1, { type: 'Drop', name: 'Big DROP' }),
      quest('oat', 2, { type: 'Oat', status: QuestStatus.Expired }),
      quest('none', 3),
    ];
    expect(ids(listCampaigns(mixed, { types: ['Drop', 'Oat'] }))).toEqual(['oat', 'drop']);
    expect(ids(listCampaigns(mixed, { types: [] }))).toEqual(['none', 'oat', 'drop']);
    expect(ids(listCampaigns(mixed, { statuses: [QuestStatus.Expired] }))).toEqual(['oat']);
    expect(
      ids(listCampaigns(mixed, { statuses: [QuestStatus.Active], status: QuestStatus.Expired })),
    ).toEqual([]);
    expect(ids(listCampaigns(mixed, { ids: ['none', 'drop', 'elsewhere'] }))).toEqual([
      'none',
      'drop',
    ]);
    expect(ids(listCampaigns(mixed, { searchString: '  big drop ' }))).toEqual(['drop']);
    expect(listCampaigns(mixed, { types: ['Drop'], first: 1 }).totalCount).toBe(1);
  });

  it.each([
    [{ chains: ['ETHEREUM'] }, 'chains is not supported: quests here have no chains'],
    [{ forAdmin: true }, 'forAdmin is not supported: this API has no admin view'],
    [{ isVerified: [1] }, 'isVerified is not supported: spaces here are not verified by Galxe'],
    [{ isRecurring: true }, 'isRecurring is not supported: quests here do not recur'],
    [{ bookmarkedBy: '0xA' }, 'bookmarkedBy is not supported: there are no bookmarks here'],
    [
      { listType: ListType.Trending },
      'listType Trending is not supported: nothing here measures trends; use Newest or Earliest',
    ],
  ])('refuses %p, naming the field', (input, message) => {
    expect(() => listCampaigns(quests, input)).toThrow(message);
  });

  it('takes null, empty and false for what it cannot answer', () => {
    expect(
      ids(
        listCampaigns(quests, {
          forAdmin: false,
          chains: null,
          rewardTypes: [],
          isRecurring: false,
          recommendByUser: '',
          excludeChildren: true,
          excludeParent: false,
        }),
      ),
    ).toHaveLength(5);
  });
});
