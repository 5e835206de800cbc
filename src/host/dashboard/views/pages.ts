import type { AccessTokenInfo } from '../../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, TOKEN_SCOPES, TokenScope } from '../../../auth/token-scopes';
import type { Space } from '../../../spaces/space.model';
import { ACTIONS_COLUMN, dataTable, html, SafeHtml, timeTag } from './html';
import { layout, LayoutContext } from './layout';

/** A page's signed-in account: its email, name, session CSRF token and what it may reach. */
export type Signed = Required<Pick<LayoutContext, 'email' | 'csrfToken' | 'access'>> &
  Pick<LayoutContext, 'name'>;

export const alert = (message: string | undefined, kind: 'error' | 'notice' = 'error') =>
  message
    ? html`<p class="alert ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</p>`
    : '';

export interface SignInView {
  csrfToken: string;
  error?: string;
  notice?: string;
  email?: string;
  /** The dashboard page to go back to once signed in (a checked path: see safeReturnPath). */
  next?: string;
}

/**
 * The sign-in form. It keeps no draft of its own (data-no-draft), and its page holds on to the
 * draft of the form whose session had ended (see DASHBOARD_JS), for the page `next` leads back to.
 */
export function signInPage(options: SignInView): SafeHtml {
  return layout(
    { title: 'Sign in' },
    html`<section class="card narrow">
      <h1>Sign in</h1>
      ${alert(options.error)} ${alert(options.notice, 'notice')}
      <form method="post" action="/dashboard/sign-in" data-no-draft data-sign-in>
        <input type="hidden" name="_csrf" value="${options.csrfToken}" />
        ${options.next ? html`<input type="hidden" name="next" value="${options.next}" />` : ''}
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

/** A new token's value as the settings page shows it once: what its box names, nothing more. */
export interface RevealedToken {
  name: string;
  token: string;
  scopes: TokenScope[];
  spaceId: number | null;
  expiresAt: string | null;
}

export interface SettingsView {
  /** The tokens this account manages. */
  tokens: AccessTokenInfo[];
  /** Space names, for the "Belongs to" column. */
  spaceNames: ReadonlyMap<number, string>;
  /** Accounts' emails by id, for who created each token. */
  creators: ReadonlyMap<string, string>;
  /** Where this account may create tokens; none: it manages no tokens (editors, viewers). */
  owners: TokenOwnerChoice[];
  created?: RevealedToken;
  /** A rotation's new value, and until when the old one works (null: it stopped at once). */
  rotated?: { token: RevealedToken; previousUntil: string | null };
  error?: string;
  notice?: string;
  /** What a refused form held, to show it again. */
  form?: { name: string; scopes: string[]; spaceId: string; expires: string; expiresOn: string };
}

/** Who created a token, as its list says it: an account's email, the command line, or neither. */
export function tokenCreatorLabel(
  createdBy: string | null,
  creators: ReadonlyMap<string, string>,
): string | null {
  if (createdBy === null) return null;
  if (createdBy === 'cli') return 'the command line';
  return creators.get(createdBy) ?? 'a removed account';
}

export const tokenOwnerLabel = (spaceId: number | null, names: ReadonlyMap<number, string>) =>
  spaceId === null ? 'Deployment' : `${names.get(spaceId) ?? 'Space'} (#${spaceId})`;

const creatorHint = (label: string | null) =>
  label === null ? '' : html`<span class="hint from"> by ${label}</span>`;

/** The box that shows a new token value, this once, with its copy button. */
function newTokenBox(heading: string, token: RevealedToken, more: SafeHtml | string) {
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
          ${timeTag(options.created.expiresAt)}.
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
              : html`The old value keeps working until ${timeTag(options.rotated.previousUntil)}.`
          }
          Expires: ${timeTag(options.rotated.token.expiresAt)}.
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
        <td data-label="Created">
          ${timeTag(token.createdAt)}${creatorHint(tokenCreatorLabel(token.createdBy, options.creators))}
        </td>
        <td data-label="Expires">${timeTag(token.expiresAt)}</td>
        <td data-label="Last used">
          ${timeTag(token.lastUsedAt)}${
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
  options: { error?: string; notice?: string } = {},
): SafeHtml {
  const empty = session.access.operator
    ? html`<p class="empty">
        No spaces yet. Create one, or load many with <code>npm run cli -- import FILE</code>.
      </p>`
    : html`<p class="empty">
        You are not a member of any space yet. Ask an owner of a space for an invitation.
      </p>`;
  return layout(
    { title: 'Spaces', active: 'spaces', ...session },
    html`<h1>Spaces</h1>
      ${alert(options.error)} ${alert(options.notice, 'notice')}
      ${
        session.access.operator
          ? html`<p><a class="button" href="/dashboard/spaces/new">New space</a></p>`
          : ''
      }
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

/**
 * The 404 page: what was not found, and a way back. Signed in, with the navigation (`back`
 * defaults to the Spaces list); signed out, the way back is the sign-in page.
 */
/**
 * A page answered while the database is out of reach or a request ran past its deadline: no
 * session can be read, so it has no navigation, and it names no server.
 */
export function unavailablePage(timedOut: boolean): SafeHtml {
  return layout(
    { title: 'Try again shortly' },
    html`<section class="card narrow">
      <h1>Try again shortly</h1>
      ${alert(
        timedOut
          ? 'The server took too long to answer this page. If you sent a form, look whether it took effect before you send it again.'
          : 'The dashboard cannot reach its database right now. Try again in a few seconds.',
      )}
      <p><a href="">Try again</a></p>
    </section>`,
  );
}

export function notFoundPage(
  session: Signed | null,
  message: string,
  back?: { href: string; label: string },
): SafeHtml {
  const way =
    back ??
    (session
      ? { href: '/dashboard/spaces', label: 'Spaces' }
      : { href: '/dashboard/sign-in', label: 'Sign in' });
  return layout(
    { title: 'Not found', ...(session ?? {}) },
    html`<section class="card narrow not-found">
      <h1>Not found</h1>
      ${alert(message)}
      <p><a href="${way.href}">← ${way.label}</a></p>
    </section>`,
  );
}
