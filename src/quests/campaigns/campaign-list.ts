import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { CampaignStatus } from './campaign-status.enum';
import type { ListCampaignInput } from './list-campaign.input';
import { ListType } from './list-type.enum';

export const DEFAULT_CAMPAIGN_PAGE = 20;
export const MAX_CAMPAIGN_PAGE = 100;

/** What a campaign list reads of a quest (QuestEntity has it all). */
export interface ListedQuest {
  id: string;
  name: string;
  status: CampaignStatus;
  type: string | null;
  /** Epoch milliseconds, or null when the quest has no start. */
  startTime: number | null;
}

/** One page of a filtered, ordered list: its quests and where it lies in the whole list. */
export interface CampaignPage<Q extends ListedQuest> {
  quests: Q[];
  /** Index of the page's first quest in the filtered list. */
  offset: number;
  totalCount: number;
}

type Input = Partial<ListCampaignInput>;

/**
 * Fields of ListCampaignInput our data cannot answer, and why: each is fine left out, null, empty
 * or false, and refused once it asks for something (a set value). Galxe's other fields are mapped
 * in {@link listCampaigns}.
 */
const UNSUPPORTED: ReadonlyArray<[keyof ListCampaignInput, string]> = [
  ['forAdmin', 'this API has no admin view'],
  ['chains', 'quests here have no chains'],
  ['gasTypes', 'quests here have no gas type'],
  ['credSources', 'quests here have no credentials'],
  ['rewardTypes', 'quests here record no rewards'],
  ['permissions', 'this API has no per-user permissions'],
  ['spaceCategories', 'spaces here have no categories'],
  ['backers', 'spaces here have no backers'],
  ['isVerified', 'spaces here are not verified by Galxe'],
  ['isRecurring', 'quests here do not recur'],
  ['listTrendingWithoutFilter', 'nothing here measures trends'],
  ['orderByTokenValue', 'quests here have no token rewards'],
  ['startTimeLastWeek', 'Galxe does not document its window: filter with statuses instead'],
  ['recommendByUser', 'there are no recommendations here'],
  ['recommendByCampaignId', 'there are no recommendations here'],
  ['bookmarkedBy', 'there are no bookmarks here'],
  ['claimableByUser', 'claims are not kept here'],
  ['relatedByAddr', 'Galxe does not document what it relates'],
];

/** A value that asks for something: not null, not an empty list or text, not false. */
function isSet(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return false;
  return !(Array.isArray(value) && value.length === 0);
}

/** Refuses the first field of `input` that asks for what our data cannot answer. */
export function refuseUnsupported(input: Input): void {
  for (const [field, why] of UNSUPPORTED) {
    if (isSet(input[field]))
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, `${field} is not supported: ${why}`);
  }
  if (input.listType === ListType.Trending)
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'listType Trending is not supported: nothing here measures trends; use Newest or Earliest',
    );
}

/**
 * The page of `quests` (one space's) that `input` asks for: filtered by ids, statuses, status,
 * types and searchString (each one given narrows the list), ordered by listType (Newest: latest
 * start first; Earliest: earliest first; quests without a start last, then by id), and paged with
 * first and after as Galxe pages (after: the 0-based index of the last quest seen, "-1" first).
 */
export function listCampaigns<Q extends ListedQuest>(
  quests: readonly Q[],
  input: Input,
): CampaignPage<Q> {
  refuseUnsupported(input);
  const size = pageSizeOf(input.first);
  const offset = offsetOf(input.after);
  const matching = quests.filter(matcherOf(input));
  matching.sort(input.listType === ListType.Earliest ? earliestFirst : newestFirst);
  return { quests: matching.slice(offset, offset + size), offset, totalCount: matching.length };
}

function matcherOf(input: Input): (quest: ListedQuest) => boolean {
  const ids = nonEmpty(input.ids);
  const statuses = nonEmpty(input.statuses);
  const types = nonEmpty(input.types);
  const search = input.searchString?.trim().toLowerCase() || null;
  return (quest) =>
    (ids === null || ids.has(quest.id)) &&
    (statuses === null || statuses.has(quest.status)) &&
    (input.status === null || input.status === undefined || quest.status === input.status) &&
    (types === null || (quest.type !== null && types.has(quest.type))) &&
    (search === null || quest.name.toLowerCase().includes(search));
}

const nonEmpty = <T>(values: readonly T[] | null | undefined): Set<T> | null =>
  values && values.length > 0 ? new Set(values) : null;

/** Quests without a start come last in either order; ties go by id (code units), so pages hold. */
function compareStarts(a: ListedQuest, b: ListedQuest, direction: 1 | -1): number {
  if (a.startTime !== b.startTime) {
    if (a.startTime === null) return 1;
    if (b.startTime === null) return -1;
    return (a.startTime - b.startTime) * direction;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const newestFirst = (a: ListedQuest, b: ListedQuest) => compareStarts(a, b, -1);
const earliestFirst = (a: ListedQuest, b: ListedQuest) => compareStarts(a, b, 1);

function pageSizeOf(first: number | null | undefined): number {
  if (first === null || first === undefined) return DEFAULT_CAMPAIGN_PAGE;
  if (first < 1) throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Invalid page size');
  return Math.min(first, MAX_CAMPAIGN_PAGE);
}

/** Galxe's offset cursors: null, "" and "-1" start at the top; "n" continues after index n. */
function offsetOf(after: string | null | undefined): number {
  if (after === null || after === undefined || after === '') return 0;
  const lastSeen = /^-?\d{1,15}$/.test(after) ? Number(after) : NaN;
  if (!(lastSeen >= -1)) throw new LoyaltyException(ErrorCode.INVALID_CURSOR);
  return lastSeen + 1;
}
