import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { demoRecords } from '../../src/ingest/demo-dataset';
import { launchChromium } from '../utils/chromium';
import { startTestApp, TestApp } from '../utils/test-app';

const SHOTS = join(__dirname, '..', '..', 'artifacts', 'screenshots');
const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/**
 * Real Chromium, driven like a person would: sign in, generate a token, see it once, use it on
 * /query, reload and see only its prefix, revoke it, see /query refuse it. Screenshots of every
 * page at both widths land in artifacts/screenshots (git-ignored).
 */
describe('the dashboard in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

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

  async function shoot(page: Page, name: string): Promise<void> {
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.screenshot({ path: join(SHOTS, `${name}-${size.name}.png`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/settings');
  }

  it('signs in, generates a token shown once, and revokes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();

    await page.goto(`${base}/dashboard/settings`);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
    await shoot(page, 'sign-in');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Email or password is incorrect.',
    );
    await shoot(page, 'sign-in-error');

    await signIn(page);
    await expect(page.getByRole('heading', { name: 'Server API' }).isVisible()).resolves.toBe(true);
    await shoot(page, 'settings');

    // Keyboard only: focus the name field, type, press Enter.
    await page.getByLabel('Token name').focus();
    await page.keyboard.type('browser-test');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#new-token');
    const token = await page.locator('#new-token').inputValue();
    expect(token).toMatch(/^lpt_[0-9A-Za-z]{49}$/);
    await expect(page.getByText('it will not be shown again').isVisible()).resolves.toBe(true);
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('query');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(token);
    await shoot(page, 'settings-token-created');

    expect((await t.gql('{ __typename }', undefined, { token })).body).toEqual({
      data: { __typename: 'Query' },
    });

    await page.goto(`${base}/dashboard/settings`);
    const content = await page.content();
    expect(content).not.toContain(token);
    expect(content).toContain(`${token.slice(0, 12)}…`);
    const row = page.getByRole('row', { name: /browser-test/ });
    await expect(row.locator('td[data-label="Last used"]').textContent()).resolves.not.toBe(
      'Never',
    );
    await expect(row.locator('td[data-label="Scopes"]').textContent()).resolves.toBe('query');

    await row.getByRole('link', { name: /Revoke/ }).click();
    await page.waitForURL('**/revoke');
    await shoot(page, 'revoke-confirm');
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.waitForURL('**/dashboard/settings?notice=revoked*');
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('revoked');
    await expect(page.getByRole('row', { name: /browser-test/ }).count()).resolves.toBe(0);

    const refused = await t.gql('{ __typename }', undefined, { token });
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions.code).toBe('INVALID_TOKEN');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/sign-in');
    await page.goto(`${base}/dashboard/settings`);
    expect(page.url()).toBe(`${base}/dashboard/sign-in`);
    await context.close();
  });

  it('generates tokens with the scopes checked, shows them, and refuses none', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    await signIn(page);
    const query = page.getByLabel('Query', { exact: true });
    const ingest = page.getByLabel('Ingest', { exact: true });
    await expect(query.isChecked()).resolves.toBe(true);
    await expect(ingest.isChecked()).resolves.toBe(false);
    await expect(
      page.getByText('POST /ingest', { exact: false }).first().isVisible(),
    ).resolves.toBe(true);

    // Both scopes: Query stays checked, Ingest is ticked with the keyboard.
    await page.getByLabel('Token name').fill('ingest-writer');
    await ingest.focus();
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Generate new API token' }).click();
    await page.waitForSelector('#new-token');
    const both = await page.locator('#new-token').inputValue();
    await expect(page.locator('.created .scopes').textContent()).resolves.toBe('ingest, query');
    await shoot(page, 'settings-token-created-scopes');
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
    await shoot(page, 'settings-scopes');

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
    await shoot(page, 'settings-no-scope');
    expect(cspViolations).toEqual([]);
    await context.close();
  });

  it('shows spaces, a paged leaderboard with sprints and search, and quests', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.waitForURL('**/dashboard/spaces');
    await shoot(page, 'spaces');
    await page.getByRole('link', { name: 'Aurora Guild' }).click();
    await page.waitForURL('**/dashboard/spaces/1');

    const board = page.locator('table.board tbody tr');
    await expect(board.count()).resolves.toBe(50);
    const ranks = async () => board.locator('td:first-child').allTextContents();
    expect((await ranks()).slice(0, 3)).toEqual(['1', '2', '3']);
    await expect(page.locator('table.quests tbody tr').count()).resolves.toBe(5);
    await shoot(page, 'space-leaderboard');

    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/after=/);
    expect((await ranks())[0]).toBe('51');
    await page.getByRole('link', { name: '← Previous' }).click();
    await page.waitForURL(/before=/);
    expect((await ranks())[0]).toBe('1');

    await page.getByLabel('Board', { exact: true }).selectOption({ label: 'Sprint 2' });
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/sprint=102/);
    const sprintRows = await board.count();
    expect(sprintRows).toBeGreaterThan(0);
    await shoot(page, 'space-sprint');

    const target = (await board.nth(4).locator('code').textContent())!;
    await page.getByLabel('Find an address').fill(target.toUpperCase().replace('0X', '0x'));
    await page.getByLabel('Find an address').press('Enter');
    await page.waitForURL(/address=/);
    await expect(page.getByRole('status').first().textContent()).resolves.toMatch(
      /is ranked 5 with \d+ points/,
    );
    await shoot(page, 'space-search');
    await context.close();
  });
});
