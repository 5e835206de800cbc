import {
  ACTIONS_COLUMN,
  dataTable,
  formatNumber,
  formatTime,
  html,
  SafeHtml,
  timeTag,
} from './html';
import { layout, NavItem } from './layout';
import { alert, ROLE_LABELS, roleBadge, RoleName, Signed } from './pages';

/*
 * What the pages show, spelled out here so that the views import nothing of the services: the
 * services' own types (MemberInfo, InvitationInfo, AccountRow, AuditEntry) fit these shapes.
 */
export interface MemberRow {
  accountId: string;
  email: string;
  name: string | null;
  role: RoleName;
  disabled: boolean;
  since: string;
  /** The space's working tokens this member created or rotated. */
  tokensCreated: number;
}
export interface InvitationRow {
  id: string;
  email: string;
  role: RoleName;
  expiresAt: string;
}
export interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  operator: boolean;
  disabled: boolean;
  createdAt: string;
}
export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  spaceId: number | null;
  target: string | null;
  detail: Record<string, unknown> | null;
  address: string | null;
}

const selectedIf = (yes: boolean) => (yes ? new SafeHtml('selected') : '');
const csrfField = (session: Signed) =>
  html`<input type="hidden" name="_csrf" value="${session.csrfToken}" />`;

/** A page that only says something: a 404, a refusal. */
export function messagePage(
  session: Signed,
  options: {
    title: string;
    message: string;
    active?: NavItem;
    back?: { href: string; label: string };
  },
): SafeHtml {
  const back = options.back ?? { href: '/dashboard/spaces', label: 'Spaces' };
  return layout(
    { title: options.title, active: options.active, ...session },
    html`<section class="card narrow">
      <h1>${options.title}</h1>
      ${alert(options.message)}
      <p><a href="${back.href}">← ${back.label}</a></p>
    </section>`,
  );
}

export interface MembersView {
  space: { id: number; name: string };
  members: MemberRow[];
  invitations: InvitationRow[];
  /** The invitation just made: its link is shown this once. */
  created?: InvitationRow & { link: string };
  error?: string;
  notice?: string;
  /** What a refused invite form held. */
  form?: { email: string; role: string };
}

const roleOptions = (current: string) =>
  (Object.keys(ROLE_LABELS) as RoleName[]).map(
    (role) =>
      html`<option value="${role}" ${selectedIf(role === current)}>${ROLE_LABELS[role]}</option>`,
  );

export function membersPage(session: Signed, view: MembersView): SafeHtml {
  const base = `/dashboard/spaces/${view.space.id}`;
  const created = view.created
    ? html`<div class="card created" role="status" aria-live="polite">
        <h3>Invitation for ${view.created.email} as ${ROLE_LABELS[view.created.role]}</h3>
        <p class="warning">
          <strong>Copy the link now: it will not be shown again.</strong> It is not sent by mail:
          send it to ${view.created.email} yourself. It works once, for 7 days (until
          ${timeTag(view.created.expiresAt)}).
        </p>
        <div class="copy-row">
          <label class="visually-hidden" for="invitation-link">Invitation link</label>
          <input id="invitation-link" type="text" readonly value="${view.created.link}" />
          <button type="button" data-copy="invitation-link">Copy</button>
        </div>
      </div>`
    : '';
  const memberRows = view.members.map(
    (member) =>
      html`<tr>
        <td data-label="Name">${member.name ?? ''}</td>
        <td data-label="Email">
          ${member.email}${member.disabled ? html` <span class="badge">Disabled</span>` : ''}
        </td>
        <td data-label="Role">
          <form method="post" action="${base}/members/${member.accountId}/role" class="row">
            ${csrfField(session)}
            <label class="visually-hidden" for="role-${member.accountId}"
              >Role of ${member.email}</label
            >
            <select id="role-${member.accountId}" name="role">
              ${roleOptions(member.role)}
            </select>
            <button type="submit">
              Change<span class="visually-hidden"> ${member.email}</span>
            </button>
          </form>
        </td>
        <td data-label="Since">${timeTag(member.since)}</td>
        <td class="actions">
          <form method="post" action="${base}/members/${member.accountId}/remove" class="inline">
            ${csrfField(session)}
            ${
              member.tokensCreated > 0
                ? html`<span class="keep-tokens">
                    <input
                      type="checkbox"
                      id="keep-tokens-${member.accountId}"
                      name="keepTokens"
                      aria-describedby="keep-tokens-hint-${member.accountId}"
                    />
                    <label for="keep-tokens-${member.accountId}"
                      >Keep their ${tokenCount(member.tokensCreated)}</label
                    >
                    <span id="keep-tokens-hint-${member.accountId}" class="visually-hidden"
                      >Unticked, removing ${member.email} revokes the
                      ${tokenCount(member.tokensCreated)} they created or rotated in this
                      space.</span
                    >
                  </span>`
                : ''
            }
            <button type="submit" class="danger">
              Remove<span class="visually-hidden"> ${member.email}</span>
            </button>
          </form>
        </td>
      </tr>`,
  );
  const invitationRows = view.invitations.map(
    (invitation) =>
      html`<tr>
        <td data-label="Email">${invitation.email}</td>
        <td data-label="Role">${ROLE_LABELS[invitation.role]}</td>
        <td data-label="Expires">${timeTag(invitation.expiresAt)}</td>
        <td class="actions">
          <form method="post" action="${base}/invitations/${invitation.id}/withdraw" class="inline">
            ${csrfField(session)}
            <button type="submit" class="danger">
              Withdraw<span class="visually-hidden"> ${invitation.email}</span>
            </button>
          </form>
        </td>
      </tr>`,
  );
  return layout(
    { title: `Members of ${view.space.name}`, active: 'spaces', ...session },
    html`<p><a href="${base}">← ${view.space.name}</a></p>
      <h1>Members of ${view.space.name}</h1>
      ${alert(view.error)} ${alert(view.notice, 'notice')} ${created}
      <section class="card" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <p class="hint">
          Owners manage members, tokens and privacy; editors adjust points; viewers read the space's
          pages. A space keeps at least one owner.
        </p>
        ${
          view.members.length === 0
            ? html`<p class="empty">No members yet.</p>`
            : dataTable(
                'members',
                'Members',
                ['Name', 'Email', 'Role', 'Since', ACTIONS_COLUMN],
                memberRows,
              )
        }
      </section>
      <section class="card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form method="post" action="${base}/invitations" class="row">
          ${csrfField(session)}
          <label for="invite-email">Email</label>
          <input
            id="invite-email"
            name="email"
            type="email"
            required
            maxlength="254"
            value="${view.form?.email ?? ''}"
          />
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role">
            ${roleOptions(view.form?.role ?? 'viewer')}
          </select>
          <button type="submit">Invite</button>
        </form>
        <p class="hint">
          You get a link to send yourself: it works once, for 7 days, and is not sent by mail.
        </p>
        <h3>Open invitations</h3>
        ${
          view.invitations.length === 0
            ? html`<p class="empty">No open invitations.</p>`
            : dataTable(
                'invitations',
                'Open invitations',
                ['Email', 'Role', 'Expires', ACTIONS_COLUMN],
                invitationRows,
              )
        }
      </section>`,
  );
}

export interface InvitationView {
  secret: string;
  csrfToken: string;
  spaceName: string;
  email: string;
  role: RoleName;
  /** Someone else is signed in in this browser: accepting signs them out. */
  signedInAs?: string;
  error?: string;
  name?: string;
}

/**
 * The invitation's own page: before there is a session, so a layout without navigation. It is the
 * same whether or not the email has an account, so that opening a link tells nothing of the
 * deployment's accounts. Sending the form does (a wrong password of an existing account is
 * refused as such), and that leaves entries in the audit trail.
 */
export function invitationPage(view: InvitationView): SafeHtml {
  const passwordField = (id: string, name: string, label: string, autocomplete: string) =>
    html`<label for="${id}">${label}</label>
      <input id="${id}" name="${name}" type="password" autocomplete="${autocomplete}" required />`;
  return layout(
    { title: `Join ${view.spaceName}` },
    html`<section class="card narrow">
      <h1>Join ${view.spaceName}</h1>
      <p>
        You are invited to join <strong>${view.spaceName}</strong> as
        <strong>${ROLE_LABELS[view.role]}</strong>, with the email <strong>${view.email}</strong>.
      </p>
      ${
        view.signedInAs && view.signedInAs !== view.email
          ? html`<p class="hint">
              You are signed in as ${view.signedInAs} in this browser: joining signs you in as
              ${view.email} instead.
            </p>`
          : ''
      }
      ${alert(view.error)}
      <form method="post" action="/dashboard/invitations/${view.secret}">
        <input type="hidden" name="_csrf" value="${view.csrfToken}" />
        <label for="name">Your name</label>
        <input
          id="name"
          name="name"
          type="text"
          autocomplete="name"
          required
          maxlength="100"
          value="${view.name ?? ''}"
          aria-describedby="name-hint"
        />
        <p id="name-hint" class="hint">An account you already have keeps its name.</p>
        <input type="hidden" name="email" value="${view.email}" autocomplete="username" />
        ${passwordField('password', 'password', 'Password', 'current-password')}
        <p class="hint">
          Your account's password if you have one with this email; else a new one, of at least 12
          characters.
        </p>
        ${passwordField('password-repeat', 'passwordRepeat', 'Repeat the password', 'new-password')}
        <button type="submit">Join ${view.spaceName}</button>
      </form>
    </section>`,
  );
}

/** An invitation link that is unknown, used, withdrawn or expired: one page for all. */
export function invitationGonePage(): SafeHtml {
  return layout(
    { title: 'Invitation not found' },
    html`<section class="card narrow">
      <h1>Invitation not found</h1>
      ${alert('This invitation link is unknown, was used already, was withdrawn or has expired.')}
      <p>Ask an owner of the space for a new invitation. Have an account already?</p>
      <p><a href="/dashboard/sign-in">Sign in</a></p>
    </section>`,
  );
}

/** The invitation form came back without its token (expired, or sent from another site). */
export function invitationFormExpiredPage(href: string): SafeHtml {
  return layout(
    { title: 'Form expired' },
    html`<section class="card narrow">
      <h1>Form expired</h1>
      ${alert('The form expired or came from another site. Nothing was changed.')}
      <p><a href="${href}">Open the invitation again</a></p>
    </section>`,
  );
}

export function accountPage(
  session: Signed,
  view: {
    /** The spaces the account belongs to, with its role in each. */
    spaces: Array<{ id: number; name: string; role: RoleName }>;
    error?: string;
    notice?: string;
  },
): SafeHtml {
  return layout(
    { title: 'Account', active: 'account', ...session },
    html`<h1>Account</h1>
      ${alert(view.notice, 'notice')}
      <section class="card" aria-labelledby="summary-title">
        <h2 id="summary-title">You</h2>
        <dl class="summary">
          <dt>Name</dt>
          <dd>${session.name ?? html`<span class="muted">(none)</span>`}</dd>
          <dt>Email</dt>
          <dd>${session.email}</dd>
          <dt>Role</dt>
          <dd>
            ${
              session.access.operator
                ? 'Operator: runs the whole deployment, every space.'
                : view.spaces.length === 0
                  ? 'Member of no space yet.'
                  : html`<ul class="plain">
                      ${view.spaces.map(
                        (space) =>
                          html`<li>
                            <a href="/dashboard/spaces/${space.id}">${space.name}</a>
                            ${roleBadge(space.role)}
                          </li>`,
                      )}
                    </ul>`
            }
          </dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">Change password</h2>
        ${alert(view.error)}
        <form method="post" action="/dashboard/account/password" class="narrow-form">
          ${csrfField(session)}
          <input type="hidden" name="email" value="${session.email}" autocomplete="username" />
          <label for="current-password">Current password</label>
          <input
            id="current-password"
            name="currentPassword"
            type="password"
            autocomplete="current-password"
            required
          />
          <label for="new-password">New password</label>
          <input
            id="new-password"
            name="newPassword"
            type="password"
            autocomplete="new-password"
            required
            minlength="12"
          />
          <label for="repeat-password">Repeat the new password</label>
          <input
            id="repeat-password"
            name="repeatPassword"
            type="password"
            autocomplete="new-password"
            required
            minlength="12"
          />
          <p class="hint">
            At least 12 characters. Every other session of your account is signed out.
          </p>
          <button type="submit">Change password</button>
        </form>
      </section>`,
  );
}

export function accountsPage(
  session: Signed & { adminId: string },
  view: { accounts: AccountRow[]; error?: string; notice?: string },
): SafeHtml {
  const rows = view.accounts.map(
    (account) =>
      html`<tr>
        <td data-label="Email">
          ${account.email}${account.id === session.adminId ? html` <span class="muted">(you)</span>` : ''}
        </td>
        <td data-label="Name">${account.name ?? ''}</td>
        <td data-label="Kind">${account.operator ? 'Operator' : 'Member'}</td>
        <td data-label="Status">
          ${account.disabled ? html`<span class="badge">Disabled</span>` : 'Active'}
        </td>
        <td data-label="Created">${timeTag(account.createdAt)}</td>
        <td class="actions">
          <form
            method="post"
            action="/dashboard/accounts/${account.id}/${account.disabled ? 'enable' : 'disable'}"
            class="inline"
          >
            ${csrfField(session)}
            <button type="submit">
              ${account.disabled ? 'Enable' : 'Disable'}<span class="visually-hidden">
                ${account.email}</span
              >
            </button>
          </form>
          <a class="danger" href="/dashboard/accounts/${account.id}/remove"
            >Remove<span class="visually-hidden"> ${account.email}</span></a
          >
        </td>
      </tr>`,
  );
  return layout(
    { title: 'Accounts', active: 'accounts', ...session },
    html`<h1>Accounts</h1>
      ${alert(view.error)} ${alert(view.notice, 'notice')}
      <section class="card" aria-labelledby="accounts-title">
        <h2 id="accounts-title">Every account of this deployment</h2>
        <p class="hint">
          Operators run the deployment; members reach the spaces they were invited to. Disabling an
          account signs it out everywhere. New operators come from
          <code>npm run cli -- admin create</code>; members join through a space's invitation.
        </p>
        ${dataTable('accounts', 'Accounts', ['Email', 'Name', 'Kind', 'Status', 'Created', ACTIONS_COLUMN], rows)}
      </section>`,
  );
}

/** "1 token", "3 tokens". */
const tokenCount = (count: number) => `${count} ${count === 1 ? 'token' : 'tokens'}`;

/** `tokensCreated`: the working tokens the account created or rotated, in any space. */
export function removeAccountPage(
  session: Signed,
  account: AccountRow,
  tokensCreated = 0,
): SafeHtml {
  return layout(
    { title: 'Remove account', active: 'accounts', ...session },
    html`<section class="card narrow">
      <h1>Remove ${account.email}?</h1>
      <p>
        The account is signed out everywhere and leaves every space. The audit trail keeps its
        entries. This cannot be undone: to come back, the person needs a new invitation.
      </p>
      ${
        tokensCreated > 0
          ? html`<p>
              ${account.email} created or rotated ${tokenCount(tokensCreated)} that still
              ${tokensCreated === 1 ? 'works' : 'work'}: removing the account revokes them, unless
              you keep them below. The audit trail names each.
            </p>`
          : ''
      }
      <form method="post" action="/dashboard/accounts/${account.id}/remove" class="row">
        ${csrfField(session)}
        ${
          tokensCreated > 0
            ? html`<span class="keep-tokens">
                <input type="checkbox" id="keep-tokens" name="keepTokens" />
                <label for="keep-tokens">Keep the ${tokenCount(tokensCreated)}</label>
              </span>`
            : ''
        }
        <button type="submit" class="danger">Remove account</button>
        <a href="/dashboard/accounts">Cancel</a>
      </form>
    </section>`,
  );
}

export interface AuditView {
  entries: AuditRow[];
  /** The space whose trail is shown; undefined: the whole deployment (operators). */
  spaceId?: number;
  /** What the filter offers: every space for an operator, the owned ones for an owner. */
  spaces: Array<{ id: number; name: string }>;
  /** Operators may see the whole deployment's trail. */
  deployment: boolean;
  /** The id to page on from ("Older"), when there are more. */
  next: string | null;
  /** Whether this is a later page (a link back to the newest). */
  paged: boolean;
}

/** An ISO 8601 moment as the audit trail stores them in details (a token's expiry). */
const ISO_MOMENT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** A detail's value as a reader takes it in: numbers with thousands separators, times in words. */
const detailValue = (value: unknown): string =>
  typeof value === 'string'
    ? ISO_MOMENT.test(value)
      ? formatTime(value)
      : value
    : typeof value === 'number'
      ? formatNumber(value)
      : Array.isArray(value)
        ? value.map(detailValue).join(', ')
        : JSON.stringify(value);

const detailText = (detail: Record<string, unknown> | null) =>
  detail
    ? Object.entries(detail)
        .map(([key, value]) => `${key}: ${detailValue(value)}`)
        .join('; ')
    : '';

export function auditPage(session: Signed, view: AuditView): SafeHtml {
  const names = new Map(view.spaces.map((space) => [space.id, space.name]));
  const spaceQuery = view.spaceId === undefined ? '' : `&spaceId=${view.spaceId}`;
  const download = (format: string) => `/settings/audit?format=${format}${spaceQuery}`;
  const rows = view.entries.map(
    (entry) =>
      html`<tr>
        <td data-label="Time">${timeTag(entry.at, { seconds: true })}</td>
        <td data-label="Actor">${entry.actor}</td>
        <td data-label="Action"><code>${entry.action}</code></td>
        <td data-label="Space">
          ${entry.spaceId === null ? 'Deployment' : `${names.get(entry.spaceId) ?? 'Space'} (#${entry.spaceId})`}
        </td>
        <td data-label="Target">${entry.target ?? ''}</td>
        <td data-label="Detail" class="detail">${detailText(entry.detail)}</td>
        <td data-label="Address">${entry.address ?? ''}</td>
      </tr>`,
  );
  return layout(
    { title: 'Audit', active: 'audit', ...session },
    html`<h1>Audit trail</h1>
      <section class="card" aria-labelledby="audit-title">
        <h2 id="audit-title">
          ${
            view.spaceId === undefined
              ? 'The whole deployment'
              : `${names.get(view.spaceId) ?? 'Space'} (#${view.spaceId})`
          }
        </h2>
        <div class="filters">
          <form method="get" action="/dashboard/audit" class="row">
            <label for="audit-space">Show</label>
            <select id="audit-space" name="spaceId">
              ${view.deployment ? html`<option value="">The whole deployment</option>` : ''}
              ${view.spaces.map(
                (space) =>
                  html`<option value="${space.id}" ${selectedIf(space.id === view.spaceId)}>
                    ${space.name} (#${space.id})
                  </option>`,
              )}
            </select>
            <button type="submit">Show</button>
          </form>
          <p class="row downloads">
            <a href="${download('csv')}" download>Download CSV</a>
            <a href="${download('ndjson')}" download>Download NDJSON</a>
          </p>
        </div>
        ${
          view.entries.length === 0
            ? html`<p class="empty">No entries${view.paged ? ' before these' : ''}.</p>`
            : dataTable(
                'audit',
                'Audit entries, newest first',
                ['Time', 'Actor', 'Action', 'Space', 'Target', 'Detail', 'Address'],
                rows,
              )
        }
        <nav class="pager" aria-label="Audit pages">
          ${
            view.paged
              ? html`<a href="/dashboard/audit?${spaceQuery.slice(1)}">← Newest</a>`
              : html`<span></span>`
          }
          ${
            view.next
              ? html`<a
                  href="/dashboard/audit?before=${encodeURIComponent(view.next)}${spaceQuery}"
                  rel="next"
                  >Older →</a
                >`
              : html`<span></span>`
          }
        </nav>
      </section>`,
  );
}
