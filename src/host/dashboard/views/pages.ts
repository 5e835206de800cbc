import type { AccessTokenInfo, CreatedAccessToken } from '../../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, TOKEN_SCOPES, TokenScope } from '../../../auth/token-scopes';
import type { LoyaltyPointsRanks } from '../../../leaderboards/graphql/loyalty-points-ranks.model';
import type { Address } from '../../../profiles/address.model';
import type { Quest } from '../../../quests/quest.model';
import type { Space } from '../../../spaces/space.model';
import type { Sprint } from '../../../spaces/sprint.model';
import { ACTIONS_COLUMN, dataTable, formatTime, html, SafeHtml } from './html';
import { layout, LayoutContext } from './layout';

/** A page's signed-in account: its email, name, session CSRF token and what it may reach. */
export type Signed = Required<Pick<LayoutContext, 'email' | 'csrfToken' | 'access'>> &
  Pick<LayoutContext, 'name'>;

export const alert = (message: string | undefined, kind: 'error' | 'notice' = 'error') =>
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

/** Where a new token may belong: `deployment` (operators) or a space id, with its label. */
export interface TokenOwnerChoice {
  value: string;
  label: string;
}

/** The expiry choices of the generate form; `date` takes the date field beside it. */
const EXPIRY_CHOICES = [
  ['30d', '30 days'],
  ['90d', '90 days'],
  ['date', 'On a date'],
  ['never', 'Never'],
] as const;
export const DEFAULT_EXPIRY_CHOICE = 'never';

export interface SettingsView {
  /** The tokens this account manages. */
  tokens: AccessTokenInfo[];
  /** Space names, for the "Belongs to" column. */
  spaceNames: ReadonlyMap<number, string>;
  /** Where this account may create tokens; none: it manages no tokens (editors, viewers). */
  owners: TokenOwnerChoice[];
  created?: CreatedAccessToken;
  /** A rotation's new value, and until when the old one works (null: it stopped at once). */
  rotated?: { token: CreatedAccessToken; previousUntil: string | null };
  error?: string;
  notice?: string;
  /** What a refused form held, to show it again. */
  form?: { name: string; scopes: string[]; spaceId: string; expires: string; expiresOn: string };
}

export const tokenOwnerLabel = (spaceId: number | null, names: ReadonlyMap<number, string>) =>
  spaceId === null ? 'Deployment' : `${names.get(spaceId) ?? 'Space'} (#${spaceId})`;

/** The box that shows a new token value, this once, with its copy button. */
function newTokenBox(heading: string, token: CreatedAccessToken, more: SafeHtml | string) {
  return html`<div class="card created" role="status" aria-live="polite">
    <h3>${heading}</h3>
    <p class="warning">
      <strong>Copy it now: it will not be shown again.</strong> Store it somewhere safe; send it in
      the <code>access-token</code> header.
    </p>
    <p>Scopes: ${scopeList(token.scopes)}</p>
    ${more}
    <div class="copy-row">
      <label class="visually-hidden" for="new-token">New API token</label>
      <input id="new-token" class="token" type="text" readonly value="${token.token}" />
      <button type="button" data-copy="new-token">Copy</button>
    </div>
  </div>`;
}

export function settingsPage(session: Signed, options: SettingsView): SafeHtml {
  const manages = options.owners.length > 0;
  const form = options.form;
  const checked = new Set<string>(form?.scopes ?? DEFAULT_TOKEN_SCOPES);
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
  const selected = (yes: boolean) => (yes ? new SafeHtml('selected') : '');
  const expires = form?.expires ?? DEFAULT_EXPIRY_CHOICE;
  const created = options.created
    ? newTokenBox(
        `New API token “${options.created.name}”`,
        options.created,
        html`<p>
          Belongs to: ${tokenOwnerLabel(options.created.spaceId, options.spaceNames)}. Expires:
          ${formatTime(options.created.expiresAt)}.
        </p>`,
      )
    : '';
  const rotated = options.rotated
    ? newTokenBox(
        `New value for “${options.rotated.token.name}”`,
        options.rotated.token,
        html`<p>
          ${
            options.rotated.previousUntil === null
              ? 'The old value stopped working at once.'
              : `The old value keeps working until ${formatTime(options.rotated.previousUntil)}.`
          }
          Expires: ${formatTime(options.rotated.token.expiresAt)}.
        </p>`,
      )
    : '';
  const rows = options.tokens.map(
    (token) =>
      html`<tr>
        <td data-label="Name">${token.name}</td>
        <td data-label="Token"><code>${token.prefix}…</code></td>
        <td data-label="Scopes">${scopeList(token.scopes)}</td>
        <td data-label="Belongs to">${tokenOwnerLabel(token.spaceId, options.spaceNames)}</td>
        <td data-label="Created">${formatTime(token.createdAt)}</td>
        <td data-label="Expires">${formatTime(token.expiresAt)}</td>
        <td data-label="Last used">
          ${formatTime(token.lastUsedAt)}${
            token.lastUsedFrom
              ? html`<span class="hint from"> from <code>${token.lastUsedFrom}</code></span>`
              : ''
          }
        </td>
        <td class="actions">
          <a href="/dashboard/settings/server-api/tokens/${token.id}/rotate"
            >Rotate<span class="visually-hidden"> ${token.name}</span></a
          >
          <a class="danger" href="/dashboard/settings/server-api/tokens/${token.id}/revoke"
            >Revoke<span class="visually-hidden"> ${token.name}</span></a
          >
        </td>
      </tr>`,
  );
  const generate = html`<form
    method="post"
    action="/dashboard/settings/server-api/tokens"
    class="generate"
  >
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
        value="${form?.name ?? ''}"
      />
    </div>
    <div class="row">
      <label for="token-owner">Belongs to</label>
      <select id="token-owner" name="spaceId" aria-describedby="token-owner-hint">
        ${options.owners.map(
          (owner) =>
            html`<option value="${owner.value}" ${selected(owner.value === form?.spaceId)}>
              ${owner.label}
            </option>`,
        )}
      </select>
      <span id="token-owner-hint" class="hint"
        >A space's token reads that space and writes only to it; a deployment token reaches every
        space.</span
      >
    </div>
    <div class="row">
      <label for="token-expires">Expires</label>
      <select id="token-expires" name="expires" data-shows-when-date="token-expires-on-row">
        ${EXPIRY_CHOICES.map(
          ([value, label]) =>
            html`<option value="${value}" ${selected(value === expires)}>${label}</option>`,
        )}
      </select>
      <span id="token-expires-on-row" class="row">
        <label for="token-expires-on">Expiry date</label>
        <input
          id="token-expires-on"
          name="expiresOn"
          type="date"
          value="${form?.expiresOn ?? ''}"
        />
      </span>
    </div>
    <fieldset class="scope-choices">
      <legend>Scopes</legend>
      ${scopeBoxes}
    </fieldset>
    <button type="submit">Generate new API token</button>
  </form>`;
  const table =
    options.tokens.length === 0
      ? html`<p class="empty">No tokens yet.</p>`
      : dataTable(
          'tokens',
          'API tokens',
          [
            'Name',
            'Token',
            'Scopes',
            'Belongs to',
            'Created',
            'Expires',
            'Last used',
            ACTIONS_COLUMN,
          ],
          rows,
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
        ${alert(options.error)} ${alert(options.notice, 'notice')} ${created} ${rotated}
        ${
          manages
            ? html`${generate} ${table}`
            : html`<p class="empty">
                API tokens are managed by the owners of each space. Ask an owner of your space for a
                token.
              </p>`
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

/** How long a rotated-out value keeps working: the rotate form's choices, in seconds. */
export const ROTATION_GRACE_CHOICES = [
  [0, 'None: the old value stops at once'],
  [3600, '1 hour'],
  [86400, '24 hours'],
  [604800, '7 days'],
] as const;
export const DEFAULT_ROTATION_GRACE = 3600;

export function rotatePage(
  session: Signed,
  token: AccessTokenInfo,
  options: { error?: string; grace?: number } = {},
): SafeHtml {
  const grace = options.grace ?? DEFAULT_ROTATION_GRACE;
  return layout(
    { title: 'Rotate token', active: 'settings', ...session },
    html`<section class="card narrow">
      <h1>Rotate “${token.name}”?</h1>
      ${alert(options.error)}
      <p>
        A new value replaces <code>${token.prefix}…</code>, with the same name, scopes and space. It
        is shown once. Give your servers time to switch: the old value can keep working a while.
      </p>
      <form method="post" action="/dashboard/settings/server-api/tokens/${token.id}/rotate">
        <input type="hidden" name="_csrf" value="${session.csrfToken}" />
        <fieldset>
          <legend>The old value keeps working for</legend>
          ${ROTATION_GRACE_CHOICES.map(
            ([seconds, label]) =>
              html`<div class="check">
                <input
                  id="grace-${seconds}"
                  type="radio"
                  name="graceSeconds"
                  value="${seconds}"
                  ${seconds === grace ? new SafeHtml('checked') : ''}
                />
                <label for="grace-${seconds}">${label}</label>
              </div>`,
          )}
        </fieldset>
        <div class="row buttons">
          <button type="submit">Rotate token</button>
          <a href="/dashboard/settings#server-api">Cancel</a>
        </div>
      </form>
    </section>`,
  );
}

/** A space as the list shows it: with the account's role there and whether it is private. */
export interface SpaceListItem {
  space: Space;
  isPrivate: boolean;
  /** The account's role; undefined for an operator who is no member. */
  role?: RoleName;
}

/** A role in a space, as the pages name it (teams/roles.ts `RoleName`, spelled out for the views). */
export type RoleName = 'owner' | 'editor' | 'viewer';

export const ROLE_LABELS: Record<RoleName, string> = {
  owner: 'Owner',
  editor: 'Editor',
  viewer: 'Viewer',
};

export const privateBadge = (isPrivate: boolean) =>
  isPrivate ? html`<span class="badge private">Private</span>` : '';
export const roleBadge = (role: RoleName | undefined) =>
  role ? html`<span class="badge role">${ROLE_LABELS[role]}</span>` : '';

export function spacesPage(
  session: Signed,
  spaces: SpaceListItem[],
  options: { error?: string } = {},
): SafeHtml {
  const empty = session.access.operator
    ? html`<p class="empty">
        No spaces yet. Load some with <code>npm run cli -- import FILE</code>.
      </p>`
    : html`<p class="empty">
        You are not a member of any space yet. Ask an owner of a space for an invitation.
      </p>`;
  return layout(
    { title: 'Spaces', active: 'spaces', ...session },
    html`<h1>Spaces</h1>
      ${alert(options.error)}
      ${
        spaces.length === 0
          ? empty
          : html`<ul class="spaces">
              ${spaces.map(
                ({ space, isPrivate, role }) =>
                  html`<li class="card">
                    <a href="/dashboard/spaces/${space.id}"><strong>${space.name}</strong></a>
                    <span class="muted">#${space.id}</span> ${privateBadge(isPrivate)}
                    ${roleBadge(role)}
                    <p>${space.description ?? ''}</p>
                  </li>`,
              )}
            </ul>`
      }`,
  );
}

export interface SpaceView {
  space: Space;
  isPrivate: boolean;
  /** The account's role; undefined for an operator who is no member. */
  role?: RoleName;
  /** Owners and operators: privacy and members. */
  manages: boolean;
  /** Editors and up: the points form. */
  edits: boolean;
  sprints: Sprint[];
  sprintId: number | null;
  board: LoyaltyPointsRanks | null;
  addresses: Map<string, Address>;
  quests: Quest[];
  error?: string;
  notice?: string;
  search?: { address: string; rank: { rank: number; points: number } | null };
  /** The points form refused: its message and what it held. */
  points?: { error: string; address: string; points: string; reason: string };
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
      <h1>${view.space.name} ${privateBadge(view.isPrivate)}</h1>
      <p class="muted">${view.space.description ?? ''}</p>
      ${view.role ? html`<p>Your role: <strong>${ROLE_LABELS[view.role]}</strong>.</p>` : ''}
      ${alert(view.notice, 'notice')} ${view.manages ? manageSection(session, view) : ''}
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
            ? html`${dataTable('board', 'Leaderboard', ['Rank', 'Address', 'User', { label: 'Points', num: true }], rows)}
              ${pager}`
            : ''
        }
      </section>
      ${view.edits ? pointsSection(session, view) : ''}
      <section class="card" aria-labelledby="quests-title">
        <h2 id="quests-title">Quests</h2>
        ${
          view.quests.length === 0
            ? html`<p class="empty">No quests.</p>`
            : dataTable(
                'quests',
                'Quests',
                ['Quest', 'Status', { label: 'Participants', num: true }],
                view.quests.map(
                  (quest) =>
                    html`<tr>
                      <td data-label="Quest">${quest.name}</td>
                      <td data-label="Status">
                        <span class="status ${quest.status}">${quest.status}</span>
                      </td>
                      <td data-label="Participants" class="num">${quest.participantsCount}</td>
                    </tr>`,
                ),
              )
        }
      </section>`,
  );
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

/** Editors and up: grant or deduct points for one address, with a reason. */
function pointsSection(session: Signed, view: SpaceView): SafeHtml {
  const form = view.points;
  return html`<section class="card" aria-labelledby="points-title">
    <h2 id="points-title">Adjust points</h2>
    <p class="hint">
      Grants points to an address, or deducts them with a negative number. The reason goes to the
      audit trail.
    </p>
    ${alert(form?.error)}
    <form method="post" action="/dashboard/spaces/${view.space.id}/points" class="points">
      <input type="hidden" name="_csrf" value="${session.csrfToken}" />
      <div class="row">
        <label for="points-address">Address</label>
        <input
          id="points-address"
          name="address"
          type="text"
          required
          maxlength="128"
          value="${form?.address ?? ''}"
        />
        <label for="points-amount">Points</label>
        <input
          id="points-amount"
          name="points"
          type="number"
          required
          step="1"
          value="${form?.points ?? ''}"
        />
      </div>
      <label for="points-reason">Reason</label>
      <input
        id="points-reason"
        name="reason"
        type="text"
        required
        maxlength="100"
        value="${form?.reason ?? ''}"
      />
      <button type="submit">Adjust points</button>
    </form>
  </section>`;
}
