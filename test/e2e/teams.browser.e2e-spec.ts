import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { demoRecords } from '../../src/ingest/demo-dataset';
import { seriousAxeViolations } from '../utils/axe';
import { launchChromium } from '../utils/chromium';
import { startTestApp, TestApp } from '../utils/test-app';

const SHOTS = join(__dirname, '..', '..', 'artifacts', 'screenshots');
const OPERATOR = { email: 'operator@example.com', password: 'operator pass phrase 1' };
const OWNER = {
  email: 'owner@example.com',
  name: 'Olivia Owner',
  password: 'owner pass phrase 22',
};
const EDITOR = {
  email: 'editor@example.com',
  name: 'Eddie Editor',
  password: 'editor pass phrase 3',
};
const VIEWER = {
  email: 'viewer@example.com',
  name: 'Vera Viewer',
  password: 'viewer pass phrase 4',
};
const SPACE = { id: 1, name: 'Aurora Guild' };
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/**
 * Many teams on one deployment, in real Chromium, one browser context per person: an operator
 * invites an owner, who joins and builds the space's team, changes a role, removes a member (whose
 * open session loses the space at its next page), and rotates a space token with a grace period.
 * Every page visited passes axe-core, logs no console error, fits 390 px, and is shot at both
 * widths.
 */
describe('teams in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const contexts: BrowserContext[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp('sqlite');
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(OPERATOR.email, OPERATOR.password);
    await t.load([
      ...demoRecords({ entriesPerSpace: 30, now: Date.parse('2026-11-20T12:00:00Z') }),
    ]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  /** A fresh browser: its own cookies, as another person on another machine. */
  async function person(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // A 404 or a refused form answers with its status on purpose: Chromium logs a page's own
      // status like a failed load. Anything else the page loads must load.
      const ownStatus =
        message.location().url === page.url() && /status of 4\d\d/.test(message.text());
      if (!ownStatus) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    return page;
  }

  /** Checks the page as it is now (axe-core, no sideways scrolling) and shoots it at both widths. */
  async function visit(page: Page, name: string): Promise<void> {
    await expect(seriousAxeViolations(page)).resolves.toEqual([]);
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.screenshot({
        path: join(SHOTS, `teams-${name}-${size.name}.png`),
        fullPage: true,
      });
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

  /** The notices the page shows (Post/Redirect/Get): each once, never after a reload. */
  const notices = async (page: Page) =>
    (await page.locator('.alert.notice[role="status"]').allTextContents()).map((s) => s.trim());

  async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/settings');
  }

  /** Invites `email` with `role` on the members page; answers the link, shown once. */
  async function invite(page: Page, email: string, role: string): Promise<string> {
    await page.goto(`${base}/dashboard/spaces/${SPACE.id}/members`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption({ label: role });
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.waitForSelector('#invitation-link');
    // A redirect to the members page, which shows the link this once.
    expect(page.url()).toBe(`${base}/dashboard/spaces/${SPACE.id}/members`);
    const warning = await said(page, '.created .warning');
    expect(warning).toContain('It works once, for 7 days');
    expect(warning).toContain('It is not sent by mail');
    const link = await page.locator('#invitation-link').inputValue();
    expect(link).toMatch(new RegExp(`^${base}/dashboard/invitations/[A-Za-z0-9_-]{43}$`));
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(link);
    return link;
  }

  /** A new account accepts `link`: name, password twice; lands in the space, signed in. */
  async function accept(
    link: string,
    who: { name: string; password: string },
    role: string,
  ): Promise<Page> {
    const page = await person();
    await page.goto(link);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      `Join ${SPACE.name}`,
    );
    await expect(said(page)).resolves.toContain(`as ${role}`);
    await page.getByLabel('Your name').fill(who.name);
    await page.getByLabel('Password', { exact: true }).fill(who.password);
    await page.getByLabel('Repeat the password').fill(who.password);
    await page.getByRole('button', { name: `Join ${SPACE.name}` }).click();
    await page.waitForURL(`**/dashboard/spaces/${SPACE.id}`);
    await expect(notices(page)).resolves.toContain('Welcome: you joined the space.');
    await expect(said(page)).resolves.toContain(`Your role: ${role}.`);
    await expect(said(page, 'header .who')).resolves.toContain(who.name);
    return page;
  }

  /** What the page says, white space collapsed as a reader sees it. */
  const said = async (page: Page, selector = 'main') =>
    ((await page.locator(selector).textContent()) ?? '').replace(/\s+/g, ' ').trim();

  const query = (token: string) =>
    t.gql(`{ space(id: ${SPACE.id}) { name } }`, undefined, { token });

  it('an operator invites an owner, who builds the team, and rotates a token with a grace period', async () => {
    // The operator: a deployment token of its own, then an invitation for the owner.
    const operator = await person();
    await signIn(operator, OPERATOR);
    await expect(operator.getByRole('link', { name: 'Accounts' }).isVisible()).resolves.toBe(true);
    await operator.getByLabel('Token name').fill('ops-export');
    await operator.getByRole('button', { name: 'Generate new API token' }).click();
    await operator.waitForSelector('#new-token');
    await expect(said(operator, '.created')).resolves.toContain('Belongs to: Deployment');
    await visit(operator, 'settings-token-created');
    await operator.goto(`${base}/dashboard/settings`);
    const opsRevoke = await operator
      .getByRole('row', { name: /ops-export/ })
      .getByRole('link', { name: /Revoke/ })
      .getAttribute('href');
    const ownerLink = await invite(operator, OWNER.email, 'Owner');
    await visit(operator, 'invitation-created');
    // Shown once: a reload has the open invitation, not its link.
    await operator.reload();
    await expect(operator.locator('#invitation-link').count()).resolves.toBe(0);
    expect(await operator.content()).not.toContain(ownerLink);

    // The operator's accounts page lists every account of the deployment.
    await operator.getByRole('link', { name: 'Accounts' }).click();
    await operator.waitForURL('**/dashboard/accounts');
    await expect(
      operator.getByRole('row', { name: new RegExp(OPERATOR.email) }).count(),
    ).resolves.toBe(1);
    await visit(operator, 'accounts');

    // The owner, in a browser of their own, joins as a new account.
    const preview = await person();
    await preview.goto(ownerLink);
    await visit(preview, 'invitation');
    await preview.context().close();
    const owner = await accept(ownerLink, OWNER, 'Owner');
    await visit(owner, 'space-owner');
    // The link worked once.
    const stranger = await person();
    const reused = await stranger.goto(ownerLink);
    expect(reused?.status()).toBe(404);
    await expect(reused?.text()).resolves.toContain('Invitation not found');
    await visit(stranger, 'invitation-gone');

    // The owner sees their space, with a role, and none of the deployment's tokens.
    await owner.getByRole('link', { name: 'Spaces', exact: true }).click();
    await owner.waitForURL('**/dashboard/spaces');
    await expect(owner.locator('ul.spaces > li').count()).resolves.toBe(1);
    await expect(owner.locator('ul.spaces > li').textContent()).resolves.toMatch(
      /Aurora Guild[\s\S]*Owner/,
    );
    await visit(owner, 'spaces-owner');
    await owner.getByRole('link', { name: 'Settings' }).click();
    await expect(owner.getByRole('row', { name: /ops-export/ }).count()).resolves.toBe(0);
    const owners = await owner.getByLabel('Belongs to').locator('option').allTextContents();
    expect(owners.map((label) => label.trim())).toEqual([`${SPACE.name} (#${SPACE.id})`]);
    const foreign = await owner.goto(`${base}${opsRevoke}`);
    expect(foreign?.status()).toBe(404);
    await expect(owner.getByRole('alert').textContent()).resolves.toBe(
      'That token does not exist or was revoked already.',
    );

    // The owner invites an editor and a viewer; each joins in a browser of their own.
    const editorLink = await invite(owner, EDITOR.email, 'Editor');
    const viewerLink = await invite(owner, VIEWER.email, 'Viewer');
    await owner.goto(`${base}/dashboard/spaces/${SPACE.id}/members`);
    await expect(owner.locator('table.invitations tbody tr').count()).resolves.toBe(2);
    const pointsForm = `form[action="/dashboard/spaces/${SPACE.id}/points"]`;
    const editor = await accept(editorLink, EDITOR, 'Editor');
    await expect(editor.locator(pointsForm).count()).resolves.toBe(1);
    const viewer = await accept(viewerLink, VIEWER, 'Viewer');
    await expect(viewer.locator(pointsForm).count()).resolves.toBe(0);
    await expect(viewer.getByRole('link', { name: 'Members' }).count()).resolves.toBe(0);
    await expect(viewer.getByRole('link', { name: 'Audit' }).count()).resolves.toBe(0);

    // A viewer sees no token form, only who manages tokens.
    await viewer.getByRole('link', { name: 'Settings' }).click();
    await viewer.waitForURL('**/dashboard/settings');
    await expect(said(viewer, '#server-api')).resolves.toContain(
      'API tokens are managed by the owners of each space.',
    );
    await expect(viewer.getByLabel('Token name').count()).resolves.toBe(0);
    await expect(viewer.locator('form.generate').count()).resolves.toBe(0);
    await visit(viewer, 'settings-viewer');

    // The owner makes the viewer an editor: the viewer's next page has the points form.
    await owner.goto(`${base}/dashboard/spaces/${SPACE.id}/members`);
    await expect(owner.locator('table.invitations').count()).resolves.toBe(0);
    const viewerRow = owner.getByRole('row', { name: new RegExp(VIEWER.email) });
    await viewerRow.getByRole('combobox').selectOption('editor');
    await viewerRow.getByRole('button', { name: /Change/ }).click();
    await owner.waitForURL(`${base}/dashboard/spaces/${SPACE.id}/members`);
    await expect(notices(owner)).resolves.toEqual(['The role was changed.']);
    await expect(
      owner
        .getByRole('row', { name: new RegExp(VIEWER.email) })
        .getByRole('combobox')
        .inputValue(),
    ).resolves.toBe('editor');
    await visit(owner, 'members');
    await owner.reload();
    await expect(notices(owner)).resolves.toEqual([]);
    // Every button's label is readable on its own background: 4.5:1 at least (the red ones too).
    // (A string: this project's TypeScript has no DOM types; the browser runs it as it is.)
    const unreadable = await owner.evaluate(`(() => {
      const luminance = (color) => {
        const [r, g, b] = color.match(/[\\d.]+/g).slice(0, 3).map((c) => {
          const s = Number(c) / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      return [...document.querySelectorAll('button')]
        .filter((button) => {
          const style = getComputedStyle(button);
          if (style.backgroundColor === 'rgba(0, 0, 0, 0)') return false;
          const [hi, lo] = [luminance(style.color), luminance(style.backgroundColor)].sort((a, b) => b - a);
          return (hi + 0.05) / (lo + 0.05) < 4.5;
        })
        .map((button) => button.textContent.trim());
    })()`);
    expect(unreadable).toEqual([]);
    // The former viewer, an editor now, finds the points form on the space's page.
    await viewer.goto(`${base}/dashboard/spaces/${SPACE.id}`);
    await expect(said(viewer)).resolves.toContain('Your role: Editor.');
    await expect(viewer.locator(pointsForm).count()).resolves.toBe(1);

    // The owner removes the editor, whose open session loses the space at its next page.
    await owner
      .getByRole('row', { name: new RegExp(EDITOR.email) })
      .getByRole('button', { name: /Remove/ })
      .click();
    await owner.waitForURL(`${base}/dashboard/spaces/${SPACE.id}/members`);
    await expect(notices(owner)).resolves.toEqual(['The member was removed.']);
    await expect(owner.getByRole('row', { name: new RegExp(EDITOR.email) }).count()).resolves.toBe(
      0,
    );
    const gone = await editor.goto(`${base}/dashboard/spaces/${SPACE.id}`);
    expect(gone?.status()).toBe(404);
    await expect(editor.getByRole('alert').textContent()).resolves.toBe('Space not found.');
    await expect(editor.locator('ul.spaces').count()).resolves.toBe(0);
    await visit(editor, '404-space-left');
    const unknown = await editor.goto(`${base}/dashboard/spaces/999`);
    expect(unknown?.status()).toBe(404);
    expect(await editor.locator('main').innerHTML()).toBe(
      await (async () => {
        await editor.goto(`${base}/dashboard/spaces/${SPACE.id}`);
        return editor.locator('main').innerHTML();
      })(),
    );

    // The owner makes a token of the space that expires in 30 days, then rotates it.
    await owner.goto(`${base}/dashboard/settings`);
    await owner.getByLabel('Token name').fill('aurora-bot');
    await owner.getByLabel('Expires', { exact: true }).selectOption({ label: '30 days' });
    await expect(owner.getByLabel('Expiry date').isVisible()).resolves.toBe(false);
    await owner.getByRole('button', { name: 'Generate new API token' }).click();
    await owner.waitForSelector('#new-token');
    const first = await owner.locator('#new-token').inputValue();
    expect((await query(first)).body.data).toEqual({ space: { name: SPACE.name } });
    await owner.goto(`${base}/dashboard/settings`);
    const row = owner.getByRole('row', { name: /aurora-bot/ });
    await expect(row.locator('td[data-label="Belongs to"]').textContent()).resolves.toBe(
      `${SPACE.name} (#${SPACE.id})`,
    );
    await expect(row.locator('td[data-label="Expires"]').textContent()).resolves.not.toBe('Never');
    await expect(row.locator('td[data-label="Last used"]').textContent()).resolves.toContain(
      'from 127.0.0.1',
    );
    await row.getByRole('link', { name: /Rotate/ }).click();
    await owner.waitForURL('**/rotate');
    await owner.getByLabel('24 hours').check();
    await visit(owner, 'rotate-confirm');
    await owner.getByRole('button', { name: 'Rotate token' }).click();
    await owner.waitForSelector('#new-token');
    expect(owner.url()).toBe(`${base}/dashboard/settings`);
    const second = await owner.locator('#new-token').inputValue();
    expect(second).toMatch(/^lpt_[0-9A-Za-z]{49}$/);
    expect(second).not.toBe(first);
    await expect(said(owner, '.created')).resolves.toContain('The old value keeps working until');
    await visit(owner, 'rotated');
    // Within the grace, both values answer.
    expect((await query(first)).body.data).toEqual({ space: { name: SPACE.name } });
    expect((await query(second)).body.data).toEqual({ space: { name: SPACE.name } });
    await owner.reload();
    expect(await owner.content()).not.toContain(second);

    // The owner's account page: who they are, their space and role, the password form.
    await owner.getByRole('link', { name: 'Account' }).click();
    await owner.waitForURL('**/dashboard/account');
    await expect(said(owner)).resolves.toContain(OWNER.email);
    await expect(owner.getByRole('link', { name: SPACE.name }).count()).resolves.toBe(1);
    await visit(owner, 'account');

    // The owner's audit trail has every step, the operator's the whole deployment.
    await owner.getByRole('link', { name: 'Audit' }).click();
    await owner.waitForURL('**/dashboard/audit');
    const actions = await owner.locator('td[data-label="Action"]').allTextContents();
    expect(actions).toEqual(
      expect.arrayContaining([
        'member.invite',
        'member.join',
        'member.role',
        'member.remove',
        'token.create',
        'token.rotate',
      ]),
    );
    expect(actions[0]).toBe('token.rotate');
    await expect(
      owner.locator('td[data-label="Time"] time').first().textContent(),
    ).resolves.toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d UTC$/);
    await visit(owner, 'audit');
    await operator.goto(`${base}/dashboard/audit`);
    await expect(operator.locator('td[data-label="Action"]').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['token.create', 'member.join']),
    );
    await visit(operator, 'audit-deployment');
    expect(consoleErrors).toEqual([]);
  });
});
