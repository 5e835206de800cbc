import { html, SafeHtml } from './html';

export type NavItem = 'spaces' | 'settings' | 'audit' | 'accounts' | 'account';

/** What the navigation asks of an account's access (teams/roles.ts `Access` answers it). */
export interface NavAccess {
  readonly operator: boolean;
  /** The spaces the account owns; undefined for an operator (every space). */
  spacesWith(permission: 'space.manage'): number[] | undefined;
}

export interface LayoutContext {
  title: string;
  /** Signed-in account; absent on the sign-in and invitation pages. */
  email?: string;
  /** Its display name, when it has one. */
  name?: string | null;
  csrfToken?: string;
  /** What the account may reach: decides which links the navigation shows. */
  access?: NavAccess;
  active?: NavItem;
}

export function layout(context: LayoutContext, body: SafeHtml): SafeHtml {
  const link = (item: NavItem, href: string, label: string) =>
    html`<a href="${href}" ${context.active === item ? new SafeHtml('aria-current="page"') : ''}
      >${label}</a
    >`;
  const access = context.access;
  const operator = access?.operator ?? false;
  const owner = operator || (access?.spacesWith('space.manage') ?? []).length > 0;
  const nav = context.email
    ? html`<nav aria-label="Dashboard">
        ${link('spaces', '/dashboard/spaces', 'Spaces')}
        ${link('settings', '/dashboard/settings', 'Settings')}
        ${owner ? link('audit', '/dashboard/audit', 'Audit') : ''}
        ${operator ? link('accounts', '/dashboard/accounts', 'Accounts') : ''}
        ${link('account', '/dashboard/account', 'Account')}
        <form method="post" action="/dashboard/sign-out" class="inline" data-no-draft>
          <input type="hidden" name="_csrf" value="${context.csrfToken}" />
          <span class="who">${context.name ? html`${context.name} · ` : ''}${context.email}</span>
          <button type="submit" class="link">Sign out</button>
        </form>
      </nav>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${context.title} · Loyalty dashboard</title>
        <link rel="icon" type="image/svg+xml" href="/dashboard/assets/favicon.svg" />
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/dashboard.js" defer></script>
      </head>
      <body data-account="${context.email ?? ''}">
        <a class="skip" href="#main">Skip to content</a>
        <header><span class="brand">Loyalty dashboard</span>${nav}</header>
        <main id="main" tabindex="-1">${body}</main>
      </body>
    </html>`;
}
