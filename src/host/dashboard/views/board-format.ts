import { QuestStatus } from '../../../records/quest-status.enum';
import type { Sprint } from '../../../spaces/sprint.model';
import { formatDate, formatNumber } from './html';

/*
 * How the board pages write ranks, points, windows and statuses, on top of html.ts's dates and
 * numbers: one place, so that a rank reads the same in the pager, the table, the charts and the
 * address page.
 */

const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** A count, rank or points total with thousands separators: 99,823. */
export const count = (value: number): string => formatNumber(value);

/** An axis label: 1.2K, 35M. */
export const compact = (value: number): string => COMPACT.format(value);

/** "3 Nov" or "3 Nov 2026", in UTC. */
function day(time: Date, withYear: boolean): string {
  const text = formatDate(time.toISOString());
  return withYear ? text : text.replace(/ \d+$/, '');
}

/**
 * The days a window covers, in UTC: "3 Nov – 16 Nov 2026". The end is exclusive (an event at
 * endTime is not in the sprint), so the last day shown is the one before a midnight end.
 */
export function dateRange(startIso: string, endIso: string): string {
  const start = new Date(startIso);
  const last = new Date(Math.max(start.getTime(), Date.parse(endIso) - 1));
  const sameYear = start.getUTCFullYear() === last.getUTCFullYear();
  if (sameYear && day(start, false) === day(last, false)) return day(start, true);
  return `${day(start, !sameYear)} – ${day(last, true)}`;
}

/** How the sprint selector and the address page name a sprint: "Sprint 2 · 3 Nov – 16 Nov 2026". */
export const sprintLabel = (sprint: Sprint): string =>
  `${sprint.name} · ${dateRange(sprint.startTime, sprint.endTime)}`;

/** Quest statuses as people say them. */
export const QUEST_STATUS_LABELS: Readonly<Record<QuestStatus, string>> = {
  [QuestStatus.Draft]: 'Draft',
  [QuestStatus.Active]: 'Active',
  [QuestStatus.NotStarted]: 'Not started',
  [QuestStatus.Expired]: 'Expired',
  [QuestStatus.CapReached]: 'Cap reached',
  [QuestStatus.Deleted]: 'Deleted',
};

/**
 * A path segment that a browser resolves before it asks ('.' stays, '..' climbs), also when
 * written %2E: the URL standard reads %2E in such a segment as a dot. So no link can carry it in a
 * path; the page takes it in the query instead.
 */
export const isDotSegment = (value: string): boolean => value === '.' || value === '..';

/**
 * A quest's edit page. A browser resolves an id of '.' or '..' in the path (even as %2E) before it
 * asks, onto another page: such an id goes in the query (`/quests/edit?quest=..`).
 */
export const questEditHref = (spaceId: number, questId: string): string =>
  isDotSegment(questId)
    ? `/dashboard/spaces/${spaceId}/quests/edit?${new URLSearchParams({ quest: questId }).toString()}`
    : `/dashboard/spaces/${spaceId}/quests/${encodeURIComponent(questId)}/edit`;

/** The address page of `address` in a space, with `params` in its query. */
export function addressHref(
  spaceId: number,
  address: string,
  params: Record<string, string> = {},
): string {
  const base = `/dashboard/spaces/${spaceId}/addresses`;
  const dots = isDotSegment(address);
  const query = new URLSearchParams({ ...(dots ? { address } : {}), ...params }).toString();
  const path = dots ? base : `${base}/${encodeURIComponent(address)}`;
  return query ? `${path}?${query}` : path;
}

/**
 * The start and the end of an address that does not fit: the CSS clips the start with an
 * ellipsis and always shows the end, so two addresses that share a prefix stay apart.
 */
export function addressParts(address: string): { head: string; tail: string } {
  const tail = address.length > 12 ? 6 : 0;
  return {
    head: address.slice(0, address.length - tail),
    tail: address.slice(address.length - tail),
  };
}

/** Entries on one page of a board. */
export const BOARD_PAGE_SIZE = 50;
