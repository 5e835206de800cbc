import type { Sprint } from '../../../spaces/sprint.model';
import { count, dateRange } from './board-format';
import { dataTable, html, SafeHtml, timeTag } from './html';
import { layout } from './layout';
import type { Signed } from './pages';

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
  /** Newest first. */
  events: AddressEvent[];
  /** Older entries exist beyond the `limit` shown. */
  more: boolean;
  limit: number;
}

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
  const eventRows = view.events.map(
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
        <p class="hint">Every grant and deduction of this address in this space, newest first.</p>
        ${
          view.events.length === 0
            ? html`<p class="empty">No ledger entries for this address in this space.</p>`
            : dataTable(
                'ledger',
                'Ledger entries, newest first',
                ['Time', { label: 'Points', num: true }, 'Key', 'Reason'],
                eventRows,
              )
        }
        ${
          view.more
            ? html`<p class="hint">
                Showing the newest ${count(view.limit)} entries; older ones are not listed.
              </p>`
            : ''
        }
      </section>`,
  );
}
