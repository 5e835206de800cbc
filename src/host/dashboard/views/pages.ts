import type { AccessTokenInfo, CreatedAccessToken } from '../../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, TOKEN_SCOPES, TokenScope } from '../../../auth/token-scopes';
import type { LoyaltyPointsRanks } from '../../../leaderboards/graphql/loyalty-points-ranks.model';
import type { Address } from '../../../profiles/address.model';
import type { Quest } from '../../../quests/quest.model';
import type { Space } from '../../../spaces/space.model';
import type { Sprint } from '../../../spaces/sprint.model';
import { formatTime, html, SafeHtml } from './html';
import { layout, LayoutContext } from './layout';

type Signed = Required<Pick<LayoutContext, 'email' | 'csrfToken'>>;

const alert = (message: string | undefined, kind: 'error' | 'notice' = 'error') =>
  message
    ? html`<p class="alert ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>`
    : '';

export function signInPage(options: {
  csrfToken: string;
  error?: string;
  email?: string;
}): SafeHtml {
  return layout(
    { title: 'Sign in' },
    html`<section class="card narrow">
      <h1>Sign in</h1>
      ${alert(options.error)}
      <form method="post" action="/dashboard/sign-in">
        <input type="hidden" name="_csrf" value="${options.csrfToken}" />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value="${options.email ?? ''}"
          autofocus
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
        <button type="submit">Sign in</button>
      </form>
    </section>`,
  );
}

/** The scope checkboxes of the generate form: a label and one line on what each one opens. */
const SCOPE_CHOICES: Record<TokenScope, { label: string; hint: SafeHtml }> = {
  query: {
    label: 'Query',
    hint: html`read spaces, leaderboards and quests with <code>POST /query</code>`,
  },
  ingest: {
    label: 'Ingest',
    hint: html`send records (points, spaces, sprints, quests) to <code>POST /ingest</code>`,
  },
};

const scopeList = (scopes: readonly string[]) =>
  html`<span class="scopes"
    >${scopes.map((scope, i) => html`${i > 0 ? ', ' : ''}<code class="scope">${scope}</code>`)}</span
  >`;

export function settingsPage(
  session: Signed,
  options: {
    tokens: AccessTokenInfo[];
    created?: CreatedAccessToken;
    error?: string;
    notice?: string;
    /** What a refused form held, to show it again. */
    form?: { name: string; scopes: string[] };
  },
): SafeHtml {
  const checked = new Set<string>(options.form?.scopes ?? DEFAULT_TOKEN_SCOPES);
  const scopeBoxes = TOKEN_SCOPES.map(
    (scope) =>
      html`<div class="check">
        <input
          id="scope-${scope}"
          type="checkbox"
          name="scopes"
          value="${scope}"
          aria-describedby="scope-${scope}-hint"
          ${checked.has(scope) ? new SafeHtml('checked') : ''}
        />
        <label for="scope-${scope}">${SCOPE_CHOICES[scope].label}</label>
        <span id="scope-${scope}-hint" class="hint">${SCOPE_CHOICES[scope].hint}</span>
      </div>`,
  );
  const created = options.created
    ? html`<div class="card created" role="status" aria-live="polite">
        <h3>New API token “${options.created.name}”</h3>
        <p class="warning">
          <strong>Copy it now: it will not be shown again.</strong> Store it somewhere safe; send it
          in the <code>access-token</code> header.
        </p>
        <p>Scopes: ${scopeList(options.created.scopes)}</p>
        <div class="copy-row">
          <label class="visually-hidden" for="new-token">New API token</label>
          <input
            id="new-token"
            class="token"
            type="text"
            readonly
            value="${options.created.token}"
          />
          <button type="button" data-copy="new-token">Copy</button>
        </div>
      </div>`
    : '';
  const rows = options.tokens.map(
    (token) =>
      html`<tr>
        <td data-label="Name">${token.name}</td>
        <td data-label="Token"><code>${token.prefix}…</code></td>
        <td data-label="Scopes">${scopeList(token.scopes)}</td>
        <td data-label="Created">${formatTime(token.createdAt)}</td>
        <td data-label="Last used">${formatTime(token.lastUsedAt)}</td>
        <td>
          <a class="danger" href="/dashboard/settings/server-api/tokens/${token.id}/revoke"
            >Revoke<span class="visually-hidden"> ${token.name}</span></a
          >
        </td>
      </tr>`,
  );
  return layout(
    { title: 'Settings', active: 'settings', ...session },
    html`<h1>Settings</h1>
      <section id="server-api" class="card" aria-labelledby="server-api-title">
        <h2 id="server-api-title">Server API</h2>
        <p>
          API tokens let your servers query <code>POST /query</code> and send records to
          <code>POST /ingest</code>, as far as their scopes allow. Each token is shown once, when it
          is generated.
        </p>
        ${alert(options.error)} ${alert(options.notice, 'notice')} ${created}
        <form method="post" action="/dashboard/settings/server-api/tokens" class="generate">
          <input type="hidden" name="_csrf" value="${session.csrfToken}" />
          <div class="row">
            <label for="token-name">Token name</label>
            <input
              id="token-name"
              name="name"
              type="text"
              required
              maxlength="100"
              placeholder="e.g. export-script"
              value="${options.form?.name ?? ''}"
            />
          </div>
          <fieldset class="scope-choices">
            <legend>Scopes</legend>
            ${scopeBoxes}
          </fieldset>
          <button type="submit">Generate new API token</button>
        </form>
        ${
          options.tokens.length === 0
            ? html`<p class="empty">No tokens yet.</p>`
            : html`<table class="tokens">
                <caption class="visually-hidden">
                  API tokens
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Token</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${rows}
                </tbody>
              </table>`
        }
      </section>`,
  );
}

export function revokePage(session: Signed, token: AccessTokenInfo): SafeHtml {
  return layout(
    { title: 'Revoke token', active: 'settings', ...session },
    html`<section class="card narrow">
      <h1>Revoke “${token.name}”?</h1>
      <p>
        Requests sending <code>${token.prefix}…</code> will be refused at once. This cannot be
        undone.
      </p>
      <form
        method="post"
        action="/dashboard/settings/server-api/tokens/${token.id}/revoke"
        class="row"
      >
        <input type="hidden" name="_csrf" value="${session.csrfToken}" />
        <button type="submit" class="danger">Revoke token</button>
        <a href="/dashboard/settings#server-api">Cancel</a>
      </form>
    </section>`,
  );
}

export function spacesPage(session: Signed, spaces: Space[]): SafeHtml {
  return layout(
    { title: 'Spaces', active: 'spaces', ...session },
    html`<h1>Spaces</h1>
      ${
        spaces.length === 0
          ? html`<p class="empty">
              No spaces yet. Load some with <code>npm run cli -- import FILE</code>.
            </p>`
          : html`<ul class="spaces">
              ${spaces.map(
                (space) =>
                  html`<li class="card">
                    <a href="/dashboard/spaces/${space.id}"><strong>${space.name}</strong></a>
                    <span class="muted">#${space.id}</span>
                    <p>${space.description ?? ''}</p>
                  </li>`,
              )}
            </ul>`
      }`,
  );
}

export interface SpaceView {
  space: Space;
  sprints: Sprint[];
  sprintId: number | null;
  board: LoyaltyPointsRanks | null;
  addresses: Map<string, Address>;
  quests: Quest[];
  error?: string;
  search?: { address: string; rank: { rank: number; points: number } | null };
}

export function spacePage(session: Signed, view: SpaceView): SafeHtml {
  const sprintParam = view.sprintId === null ? '' : `&sprint=${view.sprintId}`;
  const board = view.board;
  const pager = board
    ? html`<nav class="pager" aria-label="Leaderboard pages">
        ${
          board.pageInfo.hasPreviousPage && board.pageInfo.startCursor
            ? html`<a
                href="?before=${encodeURIComponent(board.pageInfo.startCursor)}${sprintParam}"
                rel="prev"
                >← Previous</a
              >`
            : html`<span></span>`
        }
        <span class="muted">${board.totalCount} entries</span>
        ${
          board.pageInfo.hasNextPage && board.pageInfo.endCursor
            ? html`<a
                href="?after=${encodeURIComponent(board.pageInfo.endCursor)}${sprintParam}"
                rel="next"
                >Next →</a
              >`
            : html`<span></span>`
        }
      </nav>`
    : '';
  const rows = (board?.list ?? []).map((entry) => {
    const address = view.addresses.get(entry.addressKey);
    return html`<tr>
      <td data-label="Rank">${entry.rank}</td>
      <td data-label="Address">
        <code class="address">${address?.address ?? entry.addressKey}</code>
      </td>
      <td data-label="User">${address?.username ?? ''}</td>
      <td data-label="Points" class="num">${entry.points}</td>
    </tr>`;
  });
  const search = view.search
    ? view.search.rank
      ? alert(
          `${view.search.address} is ranked ${view.search.rank.rank} with ${view.search.rank.points} points.`,
          'notice',
        )
      : alert(`${view.search.address} is not on this board.`, 'notice')
    : '';
  return layout(
    { title: view.space.name, active: 'spaces', ...session },
    html`<p><a href="/dashboard/spaces">← Spaces</a></p>
      <h1>${view.space.name}</h1>
      <p class="muted">${view.space.description ?? ''}</p>
      <section class="card" aria-labelledby="board-title">
        <h2 id="board-title">Leaderboard</h2>
        <div class="filters">
          <form method="get" class="row">
            <label for="sprint">Board</label>
            <select id="sprint" name="sprint">
              <option value="">All time</option>
              ${view.sprints.map(
                (sprint) =>
                  html`<option
                    value="${sprint.id}"
                    ${sprint.id === view.sprintId ? new SafeHtml('selected') : ''}
                  >
                    ${sprint.name}
                  </option>`,
              )}
            </select>
            <button type="submit">Show</button>
          </form>
          <form method="get" class="row">
            ${view.sprintId === null ? '' : html`<input type="hidden" name="sprint" value="${view.sprintId}" />`}
            <label for="address">Find an address</label>
            <input
              id="address"
              name="address"
              type="search"
              required
              maxlength="128"
              value="${view.search?.address ?? ''}"
            />
            <button type="submit">Find</button>
          </form>
        </div>
        ${alert(view.error)} ${search}
        ${
          board
            ? html`<table class="board">
                  <caption class="visually-hidden">
                    Leaderboard
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Rank</th>
                      <th scope="col">Address</th>
                      <th scope="col">User</th>
                      <th scope="col" class="num">Points</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${rows}
                  </tbody>
                </table>
                ${pager}`
            : ''
        }
      </section>
      <section class="card" aria-labelledby="quests-title">
        <h2 id="quests-title">Quests</h2>
        ${
          view.quests.length === 0
            ? html`<p class="empty">No quests.</p>`
            : html`<table class="quests">
                <thead>
                  <tr>
                    <th scope="col">Quest</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">Participants</th>
                  </tr>
                </thead>
                <tbody>
                  ${view.quests.map(
                    (quest) =>
                      html`<tr>
                        <td data-label="Quest">${quest.name}</td>
                        <td data-label="Status">
                          <span class="status ${quest.status}">${quest.status}</span>
                        </td>
                        <td data-label="Participants" class="num">${quest.participantsCount}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>`,
  );
}
