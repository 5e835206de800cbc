import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { seriousAxeViolations } from '../utils/axe';
import { launchChromium } from '../utils/chromium';
import { startTestApp, TestApp } from '../utils/test-app';

const SHOTS = join(__dirname, '..', '..', 'artifacts', 'screenshots');
const EMAIL = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/**
 * Real Chromium, as an operator would: create a space, a sprint and a quest through the forms,
 * see each on the space page with its notice shown once, and the same data through /query. Every
 * form page (new, refused, edit) passes axe-core and fits 390 px; screenshots of each at 1280 and
 * 390 px land in artifacts/screenshots as dashboard-content-*.
 */
describe('creating spaces, sprints and quests in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp('sqlite');
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
    await t.load([{ type: 'space', id: 1, name: 'Existing' }]);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Both widths: no serious axe violation, nothing wider than the window, a screenshot each. */
  async function check(page: Page, name: string): Promise<void> {
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await expect(seriousAxeViolations(page)).resolves.toEqual([]);
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect({ name, width: size.width, overflow }).toEqual({
        name,
        width: size.width,
        overflow: 0,
      });
      await page.screenshot({
        path: join(SHOTS, `dashboard-content-${name}-${size.name}.png`),
        fullPage: true,
      });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  /** The notice the space page shows after a form, once: a reload shows the page without it. */
  async function noticeOnce(page: Page, text: string): Promise<void> {
    await expect(page.getByRole('status').filter({ hasText: text }).count()).resolves.toBe(1);
    await page.reload();
    await expect(page.getByRole('status').filter({ hasText: text }).count()).resolves.toBe(0);
  }

  it('creates a space, a sprint and a quest, and shows them on the page and through /query', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error')
        problems.push(`${message.text()} (${message.location().url.replace(base, '')})`);
    });
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));

    // The space, by keyboard only: the proposed id kept, Tab to each field, Enter to send.
    await page.goto(`${base}/dashboard/spaces/new`);
    await expect(page.getByLabel('Space id').inputValue()).resolves.toBe('2');
    await check(page, 'space-new');
    await page.getByLabel('Space id').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type('Summer League');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Points for the summer season');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard/spaces/2`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain(
      'Summer League',
    );
    await noticeOnce(page, 'The space was created.');

    // A sprint with the mouse; dates are typed as UTC.
    await page.goto(`${base}/dashboard/spaces/2/sprints/new`);
    await check(page, 'sprint-new');
    const sprintId = await page.getByLabel('Sprint id').inputValue();
    expect(Number(sprintId)).toBeGreaterThan(0);
    await page.getByLabel('Name').fill('June');
    await page.getByLabel('Start (UTC)').fill('2026-06-01T00:00');
    await page.getByLabel('End (UTC)').fill('2026-07-01T00:00');
    await page.getByRole('button', { name: 'Create sprint' }).click();
    await page.waitForURL(`${base}/dashboard/spaces/2`);
    await noticeOnce(page, 'The sprint was created.');
    await expect(page.locator('option', { hasText: 'June' }).count()).resolves.toBe(1);

    // An overlapping sprint is refused, naming June, with what was typed kept.
    await page.goto(`${base}/dashboard/spaces/2/sprints/new`);
    await page.getByLabel('Name').fill('Late June');
    await page.getByLabel('Start (UTC)').fill('2026-06-20T00:00');
    await page.getByLabel('End (UTC)').fill('2026-07-10T00:00');
    await page.getByRole('button', { name: 'Create sprint' }).click();
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      `overlap sprint “June” (#${sprintId})`,
    );
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Late June');
    // The field at fault has the focus, to be fixed at once.
    await expect(
      page.evaluate<string | null>("document.activeElement.getAttribute('name')"),
    ).resolves.toBe('start');
    await check(page, 'sprint-refused');

    // A quest: the status chosen by its label.
    await page.goto(`${base}/dashboard/spaces/2/quests/new`);
    await check(page, 'quest-new');
    await page.getByLabel('Quest id').fill('summer-follow');
    await page.getByLabel('Name').fill('Follow us');
    await page.getByLabel('Status').selectOption({ label: 'Not started' });
    await page.getByLabel('Type (optional)').fill('social');
    await page.getByLabel('Start (UTC) (optional)').fill('2026-06-01T00:00');
    await page.getByLabel('Cap (optional)').fill('500');
    await page.getByLabel('Cap (optional)').press('Enter');
    await page.waitForURL(`${base}/dashboard/spaces/2`);
    await noticeOnce(page, 'The quest was created.');
    const questRow = page
      .getByRole('table', { name: 'Quests' })
      .getByRole('row', { name: /Follow us/ });
    await expect(questRow.locator('td[data-label="Status"]').textContent()).resolves.toContain(
      'Not started',
    );

    // The edit forms, filled with the current values.
    await page.goto(`${base}/dashboard/spaces/2/edit`);
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Summer League');
    await check(page, 'space-edit');
    await page.goto(`${base}/dashboard/spaces/2/sprints/${sprintId}/edit`);
    await expect(page.getByLabel('Start (UTC)').inputValue()).resolves.toBe('2026-06-01T00:00');
    await check(page, 'sprint-edit');
    await page.goto(`${base}/dashboard/spaces/2/quests/summer-follow/edit`);
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('NotStarted');
    await page.getByLabel('Status').selectOption({ label: 'Active' });
    await check(page, 'quest-edit');
    await page.getByRole('button', { name: 'Save quest' }).click();
    await page.waitForURL(`${base}/dashboard/spaces/2`);
    await noticeOnce(page, 'The quest was saved.');

    const space = await t.gql(
      '{ space(id: 2) { name description sprints { id name startTime endTime } } }',
    );
    expect(space.body.data.space).toEqual({
      name: 'Summer League',
      description: 'Points for the summer season',
      sprints: [
        {
          id: Number(sprintId),
          name: 'June',
          startTime: '2026-06-01T00:00:00.000Z',
          endTime: '2026-07-01T00:00:00.000Z',
        },
      ],
    });
    const quest = await t.gql(
      '{ quest(id: "summer-follow") { name status type startTime endTime cap } }',
    );
    expect(quest.body.data.quest).toEqual({
      name: 'Follow us',
      status: 'Active',
      type: 'social',
      startTime: '2026-06-01T00:00:00.000Z',
      endTime: null,
      cap: 500,
    });
    // Chromium logs the status of a page answered 400 as an error: the refused form, and only it.
    expect(problems).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request) (/dashboard/spaces/2/sprints/new)',
    ]);
    await context.close();
  });
});
