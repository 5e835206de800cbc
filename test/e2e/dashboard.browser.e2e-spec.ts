import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { demoRecords } from '../../src/ingest/demo-dataset';
import { seriousAxeViolations } from '../utils/axe';
import { launchChromium } from '../utils/chromium';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const SHOTS = join(__dirname, '..', '..', 'artifacts', 'screenshots');
const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/** WCAG's contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((c) => {
      const s = Number(c) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Real Chromium, driven like a person would: sign in, generate a token, see it once, use it on
 * /query, reload and see only its prefix, revoke it, see /query refuse it, sign out. Every page it
 * visits passes axe-core (no serious or critical violation), logs no console error, fits 390 px
 * without scrolling sideways, and is shot at 1280 and 390 px into artifacts/screenshots
 * (git-ignored).
 */
describe('the dashboard in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp('sqlite');
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
    await t.load([
      ...demoRecords({ entriesPerSpace: 120, now: Date.parse('2026-11-20T12:00:00Z') }),
    ]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => {
    expect(consoleErrors.splice(0)).toEqual([]);
  });

  /** A fresh browser whose console errors (a missing favicon, a CSP refusal) fail the spec. */
  async function person(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // A refused form or a 404 answers with its status on purpose: Chromium logs a page's own
      // status like a failed load. Anything else the page loads must load.
      const ownStatus =
        message.location().url === page.url() && /status of 4\d\d/.test(message.text());
      if (!ownStatus) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    return { context, page };
  }

  /**
   * Checks the page as it is now (axe-core, no sideways scrolling at 390 px) and shoots it at
   * both widths.
   */
  async function visit(page: Page, name: string): Promise<void> {
    await expect(seriousAxeViolations(page)).resolves.toEqual([]);
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.screenshot({ path: join(SHOTS, `${name}-${size.name}.png`), fullPage: true });
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect({ name, width: size.width, overflow }).toEqual({
        name,
        width: size.width,
        overflow: 0,
      });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  async function signIn(page: Page, landing = '**/dashboard/settings'): Promise<void> {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(landing);
  }

  const statusText = async (page: Page) =>
    ((await page.locator('.alert.notice[role="status"]').allTextContents()) ?? []).map((s) =>
      s.trim(),
    );

  it('signs in, generates a token shown once, revokes it and signs out', async () => {
    const { context, page } = await person();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });

    await page.goto(`${base}/dashboard/settings`);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
    await visit(page, 'sign-in');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Email or password is incorrect.',
    );
    await visit(page, 'sign-in-error');

    await signIn(page);
    await expect(page.getByRole('heading', { name: 'Server API' }).isVisible()).resolves.toBe(true);
    await visit(page, 'settings');

    // Keyboard only: focus the name field, type, press Enter; the answer is a redirect.
    await page.getByLabel('Token name').focus();
    await page.keyboard.type('browser-test');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-token');
    expect(page.url()).toBe(`${base}/dashboard/settings`);
    const token = await page.locator('#new-token').inputValue();
    expect(token).toMatch(/^lpt_[0-9A-Za-z]{49}$/);
    await expect(page.getByText('it will not be shown again').isVisible()).resolves.toBe(true);
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('query');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(token);
    await visit(page, 'settings-token-created');

    expect((await t.gql('{ __typename }', undefined, { token })).body).toEqual({
      data: { __typename: 'Query' },
    });

    // A reload shows the list and the prefix only, and makes no second token.
    await page.reload();
    const content = await page.content();
    expect(content).not.toContain(token);
    expect(content).toContain(`${token.slice(0, 12)}…`);
    await expect(page.getByRole('row', { name: /browser-test/ }).count()).resolves.toBe(1);
    const row = page.getByRole('row', { name: /browser-test/ });
    await expect(row.locator('td[data-label="Last used"]').textContent()).resolves.not.toBe(
      'Never',
    );
    await expect(row.locator('td[data-label="Created"] time').textContent()).resolves.toMatch(
      /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$/,
    );
    await expect(row.locator('td[data-label="Scopes"]').textContent()).resolves.toBe('query');

    await row.getByRole('link', { name: /Revoke/ }).click();
    await page.waitForURL('**/revoke');
    // The confirmation button's words stand out from its red: 4.5:1 at least.
    const button = page.getByRole('button', { name: 'Revoke token' });
    const colours = async () =>
      page.evaluate<[string, string]>(`(() => {
        const style = getComputedStyle(document.querySelector('main button[type=submit]'));
        return [style.color, style.backgroundColor];
      })()`);
    expect(contrast(...(await colours()))).toBeGreaterThanOrEqual(4.5);
    await button.hover();
    expect(contrast(...(await colours()))).toBeGreaterThanOrEqual(4.5);
    await button.focus();
    expect(contrast(...(await colours()))).toBeGreaterThanOrEqual(4.5);
    await visit(page, 'revoke-confirm');
    await button.click();
    await page.waitForURL(`${base}/dashboard/settings`);
    await expect(statusText(page)).resolves.toEqual(['The token was revoked.']);
    await expect(page.getByRole('row', { name: /browser-test/ }).count()).resolves.toBe(0);
    await visit(page, 'settings-revoked');
    await page.reload();
    await expect(statusText(page)).resolves.toEqual([]);

    const refused = await t.gql('{ __typename }', undefined, { token });
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions.code).toBe('INVALID_TOKEN');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/dashboard/sign-in`);
    await expect(statusText(page)).resolves.toEqual(['You are signed out.']);
    await visit(page, 'signed-out');
    await page.reload();
    await expect(statusText(page)).resolves.toEqual([]);
    await page.goto(`${base}/dashboard/settings`);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
    await context.close();
  });

  it('generates tokens with the scopes checked, refuses none or a name taken', async () => {
    const { context, page } = await person();
    await page.goto(`${base}/dashboard/sign-in`);
    await signIn(page);
    const query = page.getByLabel('Query', { exact: true });
    const ingest = page.getByLabel('Ingest', { exact: true });
    await expect(query.isChecked()).resolves.toBe(true);
    await expect(ingest.isChecked()).resolves.toBe(false);

    // Both scopes: Query stays checked, Ingest is ticked with the keyboard.
    await page.getByLabel('Token name').fill('ingest-writer');
    await ingest.focus();
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForSelector('#new-token');
    const both = await page.locator('#new-token').inputValue();
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('ingest, query');
    await visit(page, 'settings-token-created-scopes');
    expect((await t.gql('{ __typename }', undefined, { token: both })).status).toBe(200);

    // Ingest only: refused on /query.
    await page.getByLabel('Token name').fill('ingest-only');
    await page.getByLabel('Query', { exact: true }).uncheck();
    await page.getByLabel('Ingest', { exact: true }).check();
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForSelector('#new-token');
    const ingestOnly = await page.locator('#new-token').inputValue();
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('ingest');
    const refused = await t.gql('{ __typename }', undefined, { token: ingestOnly });
    expect(refused.status).toBe(403);
    expect(refused.body.errors[0].extensions.code).toBe('INSUFFICIENT_SCOPE');

    await page.goto(`${base}/dashboard/settings`);
    const scopesOf = (name: string) =>
      page
        .getByRole('row', { name: new RegExp(name) })
        .locator('td[data-label="Scopes"]')
        .textContent();
    await expect(scopesOf('ingest-writer')).resolves.toBe('ingest, query');
    await expect(scopesOf('ingest-only')).resolves.toBe('ingest');
    expect(await page.content()).not.toContain(both);

    // No scope at all: a clear error, the name kept, nothing created.
    await page.getByLabel('Token name').fill('no-scope');
    await page.getByLabel('Query', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'A token needs at least one scope (query, ingest)',
    );
    await expect(page.getByLabel('Token name').inputValue()).resolves.toBe('no-scope');
    await expect(page.locator('#new-token').count()).resolves.toBe(0);
    await expect(page.getByRole('row', { name: /no-scope/ }).count()).resolves.toBe(0);
    await visit(page, 'settings-no-scope');

    // A name a live token has, in other letters: refused with 409, the form kept.
    await page.goto(`${base}/dashboard/settings`);
    await page.getByLabel('Token name').fill('INGEST-WRITER');
    const answer = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    expect((await answer).status()).toBe(409);
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'A live token of the deployment is named "INGEST-WRITER" already: choose another name, or rotate or revoke that token',
    );
    await expect(page.getByLabel('Token name').inputValue()).resolves.toBe('INGEST-WRITER');
    await expect(page.getByRole('row', { name: /ingest-writer/i }).count()).resolves.toBe(1);
    await visit(page, 'settings-duplicate-name');
    await context.close();
  });

  it('keeps what was typed when the session ended before the form was sent', async () => {
    const { context, page } = await person();
    await page.goto(`${base}/dashboard/sign-in`);
    await signIn(page);
    await page.getByLabel('Token name').fill('typed before the end');
    await page.getByLabel('Ingest', { exact: true }).check();
    await page.getByLabel('Expires', { exact: true }).selectOption({ label: '90 days' });
    // The session ends while the page is open (here: every session of the account).
    await runSql(t.app.get<DataSource>(getDataSourceToken()), 'DELETE FROM admin_sessions');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForURL(`${base}/dashboard/sign-in`);
    await expect(statusText(page)).resolves.toEqual([
      'Your session ended before the form was sent. Sign in again: what you typed is kept, send it once more.',
    ]);
    // Nothing secret was kept: the session's form token and passwords never are.
    const draft = await page.evaluate<string>('sessionStorage.getItem("lb-dashboard-draft")');
    expect(draft).toContain('typed before the end');
    expect(draft).not.toContain('_csrf');
    await visit(page, 'sign-in-session-ended');
    await signIn(page);
    await expect(page.getByLabel('Token name').inputValue()).resolves.toBe('typed before the end');
    await expect(page.getByLabel('Ingest', { exact: true }).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Query', { exact: true }).isChecked()).resolves.toBe(true);
    await expect(page.getByLabel('Expires', { exact: true }).inputValue()).resolves.toBe('90d');
    await expect(statusText(page)).resolves.toContain(
      'What you typed before signing in is back: check it and send it again.',
    );
    expect(await page.evaluate('sessionStorage.getItem("lb-dashboard-draft")')).toBeNull();
    await visit(page, 'settings-draft-restored');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForSelector('#new-token');
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('ingest, query');
    await page.reload();
    await expect(page.getByLabel('Token name').inputValue()).resolves.toBe('');

    // From any page: signing in again leads back to it, with the form as it was.
    await page.goto(`${base}/dashboard/spaces/1/members`);
    await page.getByLabel('Email', { exact: true }).fill('later@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption({ label: 'Editor' });
    await runSql(t.app.get<DataSource>(getDataSourceToken()), 'DELETE FROM admin_sessions');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.waitForURL('**/dashboard/sign-in?next=%2Fdashboard%2Fspaces%2F1%2Fmembers');
    await signIn(page, `${base}/dashboard/spaces/1/members`);
    await expect(page.getByLabel('Email', { exact: true }).inputValue()).resolves.toBe(
      'later@example.com',
    );
    await expect(page.getByLabel('Role', { exact: true }).inputValue()).resolves.toBe('editor');

    // Another account signing in at the same tab never gets this account's typing.
    await t.app.get(AdminsService).create('other@example.com', PASSWORD);
    await page.goto(`${base}/dashboard/settings`);
    await page.getByLabel('Token name').fill('not for the next account');
    await runSql(t.app.get<DataSource>(getDataSourceToken()), 'DELETE FROM admin_sessions');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForURL(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill('other@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/settings');
    await expect(page.getByLabel('Token name').inputValue()).resolves.toBe('');
    await expect(statusText(page)).resolves.toEqual([]);
    expect(await page.evaluate('sessionStorage.getItem("lb-dashboard-draft")')).toBeNull();
    await context.close();
  });

  it('lists spaces, and answers a bad address with a 404 page, signed in or not', async () => {
    const { context, page } = await person();
    await page.goto(`${base}/dashboard/sign-in`);
    await signIn(page);
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.waitForURL('**/dashboard/spaces');
    await visit(page, 'spaces');
    await page.getByRole('link', { name: 'Aurora Guild' }).click();
    await page.waitForURL('**/dashboard/spaces/1');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'Aurora Guild',
    );
    await visit(page, 'space');

    const unknown = await page.goto(`${base}/dashboard/no/such/page`);
    expect(unknown?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Not found');
    await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(true);
    await visit(page, '404');
    const stranger = (await person()).page;
    const signedOut = await stranger.goto(`${base}/dashboard/no/such/page`);
    expect(signedOut?.status()).toBe(404);
    await expect(stranger.getByRole('link', { name: '← Sign in' }).isVisible()).resolves.toBe(true);
    await visit(stranger, '404-signed-out');
    await stranger.context().close();

    // A space that does not exist, or a path that names none: its own 404, not the list.
    for (const path of ['/dashboard/spaces/999999', '/dashboard/spaces/abc']) {
      const answer = await page.goto(`${base}${path}`);
      expect(answer?.status()).toBe(404);
      await expect(page.getByRole('alert').textContent()).resolves.toBe('Space not found.');
      await expect(page.locator('ul.spaces').count()).resolves.toBe(0);
    }
    await visit(page, '404-space');
    await page.getByRole('link', { name: '← Spaces' }).click();
    await page.waitForURL('**/dashboard/spaces');
    await context.close();
  });

  it('is usable by keyboard alone: a skip link, a visible focus everywhere, no trap', async () => {
    const { context, page } = await person();
    await page.goto(`${base}/dashboard/sign-in`);
    await signIn(page);
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe(
      'Skip to content',
    );
    const box = await skip.boundingBox();
    expect(box && box.x >= 0 && box.y >= 0).toBe(true);
    await page.keyboard.press('Enter');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('main');
    await page.keyboard.press('Tab');
    // The first thing of the page after the navigation: its content, not the header again.
    await expect(
      page.evaluate('document.querySelector("main").contains(document.activeElement)'),
    ).resolves.toBe(true);

    // Tab through every control of the page: each one shows its focus, and Tab reaches the end.
    await page.goto(`${base}/dashboard/settings`);
    const total = await page.evaluate<number>(
      `[...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')]
        .filter((el) => !el.disabled && el.offsetParent !== null).length`,
    );
    const seen = new Set<string>();
    for (let i = 0; i < total + 5; i++) {
      await page.keyboard.press('Tab');
      const focus = await page.evaluate<{ key: string; outline: boolean } | null>(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const style = getComputedStyle(el);
        return {
          key: el.tagName + '#' + (el.id || el.name || el.textContent.trim().slice(0, 30)),
          outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        };
      })()`);
      if (focus === null || seen.has(focus.key)) break;
      expect(focus).toEqual({ key: focus.key, outline: true });
      seen.add(focus.key);
    }
    expect(seen.size).toBeGreaterThanOrEqual(total);
    await context.close();
  });
});
