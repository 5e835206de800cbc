import type { LedgerPosition } from '../../../leaderboards/ledger/points-ledger.service';
import type { Sprint } from '../../../spaces/sprint.model';
import { addressHref, count, dateRange } from './board-format';
import { dataTable, html, SafeHtml, timeTag } from './html';
import { layout } from './layout';
import { alert, Signed } from './pages';

/** A ledger entry of the address, as PointsLedgerService.addressEvents answers it. */
export interface AddressEvent {
  key: string;
  points: number;
  /** ms since the epoch. */
  occurredAt: number;
  reason: string | null;
}

export interface AddressView {
  space: { id: number; name: string };
  address: string;
  username: string | null;
  /** The all-time board (sprint null) then each sprint's; standing null: not on that board. */
  boards: Array<{ sprint: Sprint | null; standing: { rank: number; points: number } | null }>;
  /** A page of its ledger, newest first; `paged`: a link chose it, it may not be the newest. */
  ledger: { events: AddressEvent[]; older: boolean; newer: boolean; paged: boolean };
  /** Why the page a link asked for is not shown (the newest entries are). */
  error?: string;
}

/** A ledger position as the pager's links write it (`before=` or `after=`): `<ms>:<key>`. */
export const ledgerPositionText = (position: LedgerPosition): string =>
  `${position.occurredAt}:${position.key}`;

/** The position a pager's link names, or undefined when it is none. */
export function readLedgerPosition(text: string): LedgerPosition | undefined {
  const match = /^(-?\d{1,16}):([\s\S]{1,191})$/.exec(text);
  const occurredAt = Number(match?.[1]);
  return match && Number.isSafeInteger(occurredAt) ? { occurredAt, key: match[2] } : undefined;
}

/** Ledger entries on one page of the address page. */
export const LEDGER_PAGE_SIZE = 100;

const SIGNED = new Intl.NumberFormat('en-US', { signDisplay: 'exceptZero' });

/** One address in a space: where it stands on every board, and the ledger behind it. */
export function addressPage(session: Signed, view: AddressView): SafeHtml {
  const spacePath = `/dashboard/spaces/${view.space.id}`;
  const boardRows = view.boards.map(({ sprint, standing }) => {
    const name = sprint ? sprint.name : 'All time';
    const query = new URLSearchParams({
      ...(sprint ? { sprint: String(sprint.id) } : {}),
      address: view.address,
    });
    return html`<tr>
      <th scope="row" data-label="Board">${name}</th>
      <td data-label="Dates">
        ${sprint ? dateRange(sprint.startTime, sprint.endTime) : html`<span class="muted">Every event</span>`}
      </td>
      ${
        standing
          ? html`<td data-label="Rank" class="num">${count(standing.rank)}</td>
              <td data-label="Points" class="num">${count(standing.points)}</td>
              <td data-label="On the board">
                <a href="${spacePath}?${query.toString()}"
                  >Show<span class="visually-hidden"> on the ${name} board</span></a
                >
              </td>`
          : html`<td data-label="Rank" colspan="3" class="muted">Not on this board</td>`
      }
    </tr>`;
  });
  const eventRows = view.ledger.events.map(
    (event) =>
      html`<tr>
        <td data-label="Time">
          ${timeTag(new Date(event.occurredAt).toISOString(), { seconds: true })}
        </td>
        <td data-label="Points" class="num">${SIGNED.format(event.points)}</td>
        <td data-label="Key"><code class="key">${event.key}</code></td>
        <td data-label="Reason">
          ${event.reason ?? html`<span class="muted">No reason given</span>`}
        </td>
      </tr>`,
  );
  return layout(
    {
      title: `${view.username ?? view.address} · ${view.space.name}`,
      active: 'spaces',
      ...session,
    },
    html`<p><a href="${spacePath}">← ${view.space.name}</a></p>
      <h1 class="address-title">
        ${view.username ?? 'Address'}
        <code class="address">${view.address}</code>
      </h1>
      ${alert(view.error)}
      <section class="card" aria-labelledby="boards-title">
        <h2 id="boards-title">Points and rank</h2>
        ${dataTable(
          'standings',
          'Points and rank on each board',
          [
            'Board',
            'Dates',
            { label: 'Rank', num: true },
            { label: 'Points', num: true },
            'On the board',
          ],
          boardRows,
        )}
      </section>
      <section class="card" aria-labelledby="ledger-title">
        <h2 id="ledger-title">Ledger</h2>
        <p class="hint">
          Every grant and deduction of this address in this space, newest first,
          ${count(LEDGER_PAGE_SIZE)} to a page.
        </p>
        ${
          view.ledger.events.length > 0
            ? dataTable(
                'ledger',
                'Ledger entries, newest first',
                ['Time', { label: 'Points', num: true }, 'Key', 'Reason'],
                eventRows,
              )
            : view.ledger.paged
              ? html`<p class="empty">No ledger entries past this point.</p>`
              : html`<p class="empty">No ledger entries for this address in this space.</p>`
        }
        ${ledgerPager(view)}
      </section>`,
  );
}

/** Newest, newer and older entries: links only where entries lie that way. */
function ledgerPager(view: AddressView): SafeHtml | string {
  const { events, older, newer, paged } = view.ledger;
  if (!older && !newer && !paged) return '';
  const href = (params: Record<string, string> = {}) =>
    addressHref(view.space.id, view.address, params);
  const link = (to: string, label: string, rel?: string) =>
    html`<li>
      <a href="${to}" ${rel ? new SafeHtml(`rel="${rel}"`) : ''}>${label}</a>
    </li>`;
  const idle = (label: string) => html`<li><span class="idle">${label}</span></li>`;
  const [first, last] = [events[0], events[events.length - 1]];
  return html`<nav class="pager" aria-label="Ledger pages">
    <ul>
      ${paged ? link(href(), 'Newest') : idle('Newest')}
      ${
        newer && first
          ? link(href({ after: ledgerPositionText(first) }), '← Newer entries', 'prev')
          : idle('← Newer entries')
      }
      ${
        older && last
          ? link(href({ before: ledgerPositionText(last) }), 'Older entries →', 'next')
          : idle('Older entries →')
      }
    </ul>
  </nav>`;
}
