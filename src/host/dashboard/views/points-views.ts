import { newFormKey } from '../forms/points-form';
import { html, SafeHtml } from './html';
import { alert, Signed } from './pages';
import type { SpaceView } from './space-page';

/** What a refused points form held, shown again with its message. */
export interface PointsFormInput {
  error: string;
  address: string;
  /** The amount as typed: a positive number, its sign is `direction`. */
  points: string;
  reason: string;
  /** "grant" or "deduct" as chosen; absent (nothing chosen) when none was. */
  direction?: string;
}

const checked = (on: boolean) => (on ? new SafeHtml('checked') : '');

/**
 * Editors and up: grant or deduct points for one address, with a reason, and the way to the
 * uploads of many. The form carries a key made now: sent twice, it applies once.
 */
export function pointsSection(session: Signed, view: SpaceView): SafeHtml {
  const form: PointsFormInput | undefined = view.points;
  const spaceId = view.space.id;
  return html`<section class="card" aria-labelledby="points-title">
    <h2 id="points-title">Adjust points</h2>
    <p class="hint" id="points-hint">
      For one address. The reason is kept in the ledger and in the audit trail.
    </p>
    ${alert(form?.error)}
    <form
      method="post"
      action="/dashboard/spaces/${spaceId}/points"
      class="points-form"
      data-points-form
      aria-describedby="points-hint"
    >
      <input type="hidden" name="_csrf" value="${session.csrfToken}" />
      <input type="hidden" name="key" value="${newFormKey(Date.now())}" />
      <fieldset class="points-direction">
        <legend>Grant or deduct</legend>
        <div class="check">
          <input
            id="points-grant"
            name="direction"
            type="radio"
            value="grant"
            required
            ${checked(form?.direction === 'grant')}
          />
          <label for="points-grant">Grant points</label>
        </div>
        <div class="check">
          <input
            id="points-deduct"
            name="direction"
            type="radio"
            value="deduct"
            ${checked(form?.direction === 'deduct')}
          />
          <label for="points-deduct">Deduct points</label>
        </div>
      </fieldset>
      <div class="points-fields">
        <div>
          <label for="points-address">Address</label>
          <input
            id="points-address"
            name="address"
            type="text"
            required
            maxlength="128"
            autocomplete="off"
            spellcheck="false"
            value="${form?.address ?? ''}"
          />
        </div>
        <div>
          <label for="points-amount">Points</label>
          <input
            id="points-amount"
            name="points"
            type="number"
            required
            min="1"
            max="1000000000"
            step="1"
            inputmode="numeric"
            aria-describedby="points-amount-hint"
            value="${form?.points ?? ''}"
          />
          <span class="hint" id="points-amount-hint">A positive whole number.</span>
        </div>
      </div>
      <label for="points-reason">Reason</label>
      <input
        id="points-reason"
        name="reason"
        type="text"
        required
        maxlength="200"
        value="${form?.reason ?? ''}"
      />
      <button type="submit" data-points-submit>Adjust points</button>
    </form>
    <p class="points-many">
      <a href="/dashboard/spaces/${spaceId}/points/uploads"
        >Grant or deduct for many addresses: paste lines or upload a CSV or NDJSON file</a
      >
    </p>
  </section>`;
}
