import type { LoyaltyPointsRank } from '../../../leaderboards/graphql/loyalty-points-rank.model';
import type { Address } from '../../../profiles/address.model';
import type { Quest } from '../../../quests/quest.model';
import type { Space } from '../../../spaces/space.model';
import type { Sprint } from '../../../spaces/sprint.model';
import { distributionChart, PointsDistribution, TopEntry, topEntriesChart } from './board-charts';
import {
  addressHref,
  addressParts,
  count,
  questEditHref,
  QUEST_STATUS_LABELS,
  sprintLabel,
  BOARD_PAGE_SIZE,
} from './board-format';
import { ACTIONS_COLUMN, dataTable, formatDate, html, SafeHtml, timeTag } from './html';
import { layout } from './layout';
import { alert, privateBadge, ROLE_LABELS, RoleName, Signed } from './pages';
import { PointsFormInput, pointsSection } from './points-views';

/** One page of a board as the space page shows it. */
export interface BoardView {
  entries: LoyaltyPointsRank[];
  /** Entries on the whole board. */
  total: number;
  /** 1-based, of {@link BOARD_PAGE_SIZE} entries. */
  page: number;
  pageCount: number;
  /** The rank of the row to highlight: the address found, or the rank gone to. */
  current?: number;
}

export interface SpaceView {
  space: Space;
  isPrivate: boolean;
  /** The account's role; undefined for an operator who is no member. */
  role?: RoleName;
  /** Owners and operators: privacy and members. */
  manages: boolean;
  /** Editors and up: the points form, and the links to edit the space, its sprints and quests. */
  edits: boolean;
  sprints: Sprint[];
  sprintId: number | null;
  board: BoardView | null;
  /** Profiles of the page's entries and of the top entries, by address key. */
  addresses: Map<string, Address>;
  quests: Quest[];
  /**
   * The board's points distribution and its top entries; none for an empty board. Either is null
   * when it could not be read: the chart then says so, and the board above is whole.
   */
  charts?: {
    distribution: PointsDistribution | null;
    top: LoyaltyPointsRank[] | null;
    asOf: number;
  };
  error?: string;
  notice?: string;
  search?: { address: string; rank: { rank: number; points: number } | null };
  /** The rank the "Go to rank" form asked for, to show it again. */
  jump?: number;
  /** The points form refused: its message and what it held. */
  points?: PointsFormInput;
}

const spacePath = (view: SpaceView) => `/dashboard/spaces/${view.space.spaceId}`;

/** The space page with `params`, on the board shown now. */
function boardHref(view: SpaceView, params: Record<string, string | number> = {}): string {
  const query = new URLSearchParams();
  if (view.sprintId !== null) query.set('sprint', String(view.sprintId));
  for (const [name, value] of Object.entries(params)) query.set(name, String(value));
  const text = query.toString();
  return text ? `${spacePath(view)}?${text}` : spacePath(view);
}

/** Keeps the board shown now in a GET form that changes something else. */
const sprintField = (view: SpaceView) =>
  view.sprintId === null
    ? ''
    : html`<input type="hidden" name="sprint" value="${view.sprintId}" />`;

/**
 * A space: its board (a page of it, its pager, search and rank jump, its CSV), the board's charts,
 * the points form for editors, its sprints and its quests, with the links that edit them.
 */
export function spacePage(session: Signed, view: SpaceView): SafeHtml {
  return layout(
    { title: view.space.name, active: 'spaces', ...session },
    html`<p><a href="/dashboard/spaces">← Spaces</a></p>
      <h1>${view.space.name} ${privateBadge(view.isPrivate)}</h1>
      <p class="muted">${view.space.description ?? ''}</p>
      ${view.role ? html`<p>Your role: <strong>${ROLE_LABELS[view.role]}</strong>.</p>` : ''}
      ${view.manages ? html`<p><a href="${spacePath(view)}/edit">Edit space</a></p>` : ''}
      ${alert(view.notice, 'notice')} ${view.manages ? manageSection(session, view) : ''}
      ${boardSection(view)} ${view.charts ? chartsSection(view, view.charts) : ''}
      ${view.edits ? pointsSection(session, view) : ''} ${sprintsSection(view)}
      ${questsSection(view)}`,
  );
}

function boardSection(view: SpaceView): SafeHtml {
  const board = view.board;
  const exportHref = `${spacePath(view)}/export.csv${view.sprintId === null ? '' : `?sprint=${view.sprintId}`}`;
  return html`<section class="card" aria-labelledby="board-title">
    <div class="section-head">
      <h2 id="board-title">Leaderboard</h2>
      ${
        board && board.total > 0
          ? html`<a class="button secondary" href="${exportHref}" download>Download CSV</a>`
          : ''
      }
    </div>
    <div class="filters">
      <form method="get" action="${spacePath(view)}" class="row">
        <label for="sprint">Board</label>
        <select id="sprint" name="sprint">
          <option value="">All time</option>
          ${view.sprints.map(
            (sprint) =>
              html`<option
                value="${sprint.id}"
                ${sprint.id === view.sprintId ? new SafeHtml('selected') : ''}
              >
                ${sprintLabel(sprint)}
              </option>`,
          )}
        </select>
        <button type="submit">Show</button>
      </form>
      <form method="get" action="${spacePath(view)}" class="row address-search">
        ${sprintField(view)}
        <label for="address">Find an address</label>
        <input
          id="address"
          name="address"
          type="search"
          required
          maxlength="128"
          autocomplete="off"
          spellcheck="false"
          value="${view.search?.address ?? ''}"
        />
        <button type="submit">Find</button>
      </form>
    </div>
    ${alert(view.error)} ${searchResult(view)}
    ${
      board
        ? html`<div class="board-tools">
              <p class="range">${rangeText(board)}</p>
              ${board.total > 0 ? jumpForm(view) : ''}
            </div>
            ${
              board.total === 0
                ? html`<p class="empty">No entries on this board yet.</p>`
                : html`${dataTable(
                    'board',
                    'Leaderboard',
                    ['Rank', 'Address', 'User', { label: 'Points', num: true }],
                    board.entries.map((entry) => boardRow(view, entry, board.current)),
                  )}
                  ${pager(view, board)}`
            }`
        : ''
    }
  </section>`;
}

/** What a search found, with a way to the address's page; the row itself is highlighted. */
function searchResult(view: SpaceView): SafeHtml | string {
  const search = view.search;
  if (!search) return '';
  // The class lets a long address wrap on a narrow screen.
  if (!search.rank)
    return html`<p class="alert notice search-result" role="status">
      ${search.address} is not on this board.
    </p>`;
  const sentence = `${search.address} is ranked ${count(search.rank.rank)} with ${count(search.rank.points)} points.`;
  return html`<p class="alert notice search-result" role="status">
    ${sentence}
    <a href="${addressHref(view.space.spaceId, search.address)}">Open its address page</a>
  </p>`;
}

/** "1–50 of 99,823". */
function rangeText(board: BoardView): string {
  if (board.total === 0) return '0 entries';
  const first = (board.page - 1) * BOARD_PAGE_SIZE + 1;
  const last = first + board.entries.length - 1;
  return `${count(first)}–${count(last)} of ${count(board.total)}`;
}

function jumpForm(view: SpaceView): SafeHtml {
  return html`<form method="get" action="${spacePath(view)}" class="row jump">
    ${sprintField(view)}
    <label for="rank">Go to rank</label>
    <input
      id="rank"
      name="rank"
      type="number"
      min="1"
      step="1"
      inputmode="numeric"
      required
      value="${view.jump ?? ''}"
    />
    <button type="submit">Go</button>
  </form>`;
}

function boardRow(view: SpaceView, entry: LoyaltyPointsRank, current: number | undefined) {
  const profile = view.addresses.get(entry.addressKey);
  const address = profile?.address ?? entry.addressKey;
  const { head, tail } = addressParts(address);
  const highlighted = entry.rank === current;
  return html`<tr
    id="rank-${entry.rank}"
    ${highlighted ? new SafeHtml('class="current" aria-current="true"') : ''}
  >
    <td data-label="Rank" class="rank">${count(entry.rank)}</td>
    <td data-label="Address" class="who">
      <a
        href="${addressHref(view.space.spaceId, address)}"
        title="${address}"
        aria-label="${address}"
        ><code class="address"
          ><span class="head">${head}</span><span class="tail">${tail}</span></code
        ></a
      >
    </td>
    <td data-label="User" class="user">${profile?.username ?? ''}</td>
    <td data-label="Points" class="num">${count(entry.points)}</td>
  </tr>`;
}

/** First, Previous, the page, Next and Last: the ends of a 100,000-entry board are one click away. */
function pager(view: SpaceView, board: BoardView): SafeHtml {
  const link = (page: number, label: string, rel?: string) =>
    html`<li>
      <a href="${boardHref(view, { page })}" ${rel ? new SafeHtml(`rel="${rel}"`) : ''}>${label}</a>
    </li>`;
  const idle = (label: string) => html`<li><span class="idle">${label}</span></li>`;
  const back = board.page > 1;
  const onward = board.page < board.pageCount;
  return html`<nav class="pager" aria-label="Leaderboard pages">
    <ul>
      ${back ? link(1, 'First') : idle('First')}
      ${back ? link(board.page - 1, '← Previous', 'prev') : idle('← Previous')}
      <li class="where">Page ${count(board.page)} of ${count(board.pageCount)}</li>
      ${onward ? link(board.page + 1, 'Next →', 'next') : idle('Next →')}
      ${onward ? link(board.pageCount, 'Last') : idle('Last')}
    </ul>
  </nav>`;
}

function chartsSection(view: SpaceView, charts: NonNullable<SpaceView['charts']>): SafeHtml {
  const unread = (what: string) =>
    html`<p class="chart-note">
      ${what} could not be read just now. Reload the page to try again.
    </p>`;
  const top: TopEntry[] = (charts.top ?? []).map((entry) => {
    const profile = view.addresses.get(entry.addressKey);
    const address = profile?.address ?? entry.addressKey;
    return {
      rank: entry.rank,
      points: entry.points,
      address,
      username: profile?.username ?? null,
      href: addressHref(view.space.spaceId, address),
    };
  });
  return html`<section class="card" aria-labelledby="charts-title">
    <h2 id="charts-title">Charts</h2>
    <div class="charts">
      ${charts.distribution ? distributionChart(charts.distribution) : unread('The points distribution')}
      ${charts.top ? topEntriesChart(top, charts.asOf) : unread('The top entries')}
    </div>
  </section>`;
}

/** "Edit" links name what they edit, for whoever hears the links alone. */
const editLink = (href: string, what: string) =>
  html`<a href="${href}">Edit<span class="visually-hidden"> ${what}</span></a>`;

function sprintsSection(view: SpaceView): SafeHtml {
  const path = spacePath(view);
  const columns = ['Sprint', 'Starts', 'Ends', ...(view.edits ? [ACTIONS_COLUMN] : [])];
  const rows = view.sprints.map(
    (sprint) =>
      html`<tr>
        <td data-label="Sprint"><a href="${path}?sprint=${sprint.id}">${sprint.name}</a></td>
        <td data-label="Starts">${timeTag(sprint.startTime)}</td>
        <td data-label="Ends">${timeTag(sprint.endTime)}</td>
        ${
          view.edits
            ? html`<td class="actions">
                ${editLink(`${path}/sprints/${sprint.id}/edit`, sprint.name)}
              </td>`
            : ''
        }
      </tr>`,
  );
  return html`<section class="card" aria-labelledby="sprints-title">
    <div class="section-head">
      <h2 id="sprints-title">Sprints</h2>
      ${view.edits ? html`<a class="button secondary" href="${path}/sprints/new">New sprint</a>` : ''}
    </div>
    <p class="hint">
      A sprint counts the points of events from its start up to, not including, its end (UTC).
    </p>
    ${
      view.sprints.length === 0
        ? html`<p class="empty">No sprints.</p>`
        : dataTable('sprints', 'Sprints', columns, rows)
    }
  </section>`;
}

/** A quest's window: either end may be open. */
function questDates(quest: Quest): SafeHtml | string {
  if (quest.startTime && quest.endTime)
    return `${formatDate(quest.startTime)} – ${formatDate(quest.endTime)}`;
  if (quest.startTime) return `From ${formatDate(quest.startTime)}`;
  if (quest.endTime) return `Until ${formatDate(quest.endTime)}`;
  return html`<span class="muted">No dates</span>`;
}

function questsSection(view: SpaceView): SafeHtml {
  const path = spacePath(view);
  const columns = [
    'Quest',
    'Status',
    'Type',
    'Dates',
    { label: 'Cap', num: true },
    { label: 'Participants', num: true },
    ...(view.edits ? [ACTIONS_COLUMN] : []),
  ];
  const rows = view.quests.map(
    (quest) =>
      html`<tr>
        <td data-label="Quest">${quest.name}</td>
        <td data-label="Status">
          <span class="status ${quest.status}">${QUEST_STATUS_LABELS[quest.status]}</span>
        </td>
        <td data-label="Type">${quest.type ?? html`<span class="muted">None</span>`}</td>
        <td data-label="Dates">${questDates(quest)}</td>
        <td data-label="Cap" class="num">
          ${quest.cap === null ? html`<span class="muted">No cap</span>` : count(quest.cap)}
        </td>
        <td data-label="Participants" class="num">${count(quest.participantsCount)}</td>
        ${
          view.edits
            ? html`<td class="actions">
                ${editLink(questEditHref(view.space.spaceId, quest.id), quest.name)}
              </td>`
            : ''
        }
      </tr>`,
  );
  return html`<section class="card" aria-labelledby="quests-title">
    <div class="section-head">
      <h2 id="quests-title">Quests</h2>
      ${view.edits ? html`<a class="button secondary" href="${path}/quests/new">New quest</a>` : ''}
    </div>
    ${
      view.quests.length === 0
        ? html`<p class="empty">No quests.</p>`
        : dataTable('quests', 'Quests', columns, rows)
    }
  </section>`;
}

/** Owners and operators: the space's members, audit trail and privacy. */
function manageSection(session: Signed, view: SpaceView): SafeHtml {
  return html`<section class="card" aria-labelledby="manage-title">
    <h2 id="manage-title">Team and privacy</h2>
    <p>
      <a href="/dashboard/spaces/${view.space.id}/members">Members</a> ·
      <a href="/dashboard/audit?spaceId=${view.space.id}">Audit trail</a>
    </p>
    <form method="post" action="/dashboard/spaces/${view.space.id}/privacy" class="row">
      <input type="hidden" name="_csrf" value="${session.csrfToken}" />
      <input type="hidden" name="private" value="${view.isPrivate ? 'false' : 'true'}" />
      <span
        >${
          view.isPrivate
            ? 'This space is private: only its own tokens and deployment tokens read it.'
            : 'This space is public: every token with the query scope reads it.'
        }</span
      >
      <button type="submit">${view.isPrivate ? 'Make public' : 'Make private'}</button>
    </form>
  </section>`;
}
