import { html, SafeHtml } from './html';

export interface LayoutContext {
  title: string;
  /** Signed-in admin; absent on the sign-in page. */
  email?: string;
  csrfToken?: string;
  active?: 'spaces' | 'settings';
}

export function layout(context: LayoutContext, body: SafeHtml): SafeHtml {
  const nav = context.email
    ? html`<nav aria-label="Dashboard">
        <a
          href="/dashboard/spaces"
          ${context.active === 'spaces' ? new SafeHtml('aria-current="page"') : ''}
          >Spaces</a
        >
        <a
          href="/dashboard/settings"
          ${context.active === 'settings' ? new SafeHtml('aria-current="page"') : ''}
          >Settings</a
        >
        <form method="post" action="/dashboard/sign-out" class="inline">
          <input type="hidden" name="_csrf" value="${context.csrfToken}" />
          <span class="who">${context.email}</span>
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
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/dashboard.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header><span class="brand">Loyalty dashboard</span>${nav}</header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}
