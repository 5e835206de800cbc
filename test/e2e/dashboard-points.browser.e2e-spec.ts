import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { seriousAxeViolations } from '../utils/axe';
import { launchChromium } from '../utils/chromium';
import { startTestApp, TestApp } from '../utils/test-app';

const SHOTS = join(__dirname, '..', '..', 'artifacts', 'screenshots');
const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const SPACE = 1;
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

const CSV = [
  'address,points,reason',
  '0xA11CE,25,Community call host',
  '0xB0B,10,',
  '0xA11CE,-5,Duplicate claim',
  '0x c,5,bad address',
  '0xD00D,3,"Bug report, critical"',
].join('\n');
/** The most an upload may hold: its apply takes a few seconds, in parts. */
const BIG_LINES = 100_000;

/**
 * Points in real Chromium, keyboard first: grant and deduct for one address, upload a file, see
 * its lines checked, apply it, upload the same file again and see that nothing changes; a large
 * file shows its upload's and its apply's progress. Every page visited passes axe-core, logs no
 * console error, fits 390 px, and is shot at both widths (dashboard-points-*).
 */
describe('points in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp('sqlite');
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
    await t.load([
      { type: 'space', id: SPACE, name: 'Alpha' },
      ...['0xFACE', '0xBEEF'].map((address, i) => ({
        type: 'points',
        key: `seed-${i}`,
        spaceId: SPACE,
        address,
        points: 30 - i * 10,
        occurredAt: '2026-01-05T10:00:00Z',
      })),
    ]);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // A refused form answers with its status on purpose: Chromium logs it like a failed load.
      const ownStatus =
        message.location().url.startsWith(`${base}/dashboard/spaces/`) &&
        /status of 4\d\d/.test(message.text());
      if (!ownStatus) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/settings');
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
  });
  afterEach(() => expect(consoleErrors.splice(0)).toEqual([]));

  /** Checks the page as it is now (axe-core, no sideways scrolling) and shoots it at both widths. */
  async function visit(name: string): Promise<void> {
    await expect(seriousAxeViolations(page)).resolves.toEqual([]);
    await shoot(name);
  }

  /** Screenshots at both widths, and no sideways scrolling at either. */
  async function shoot(name: string): Promise<void> {
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.screenshot({
        path: join(SHOTS, `dashboard-points-${name}-${size.name}.png`),
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

  const texts = async (selector: string) =>
    (await page.locator(selector).allTextContents()).map((text) =>
      text.replace(/\s+/g, ' ').trim(),
    );
  const pointsOf = async (address: string) => {
    const answer = await t.gql(
      `query ($address: String!) { space(id: ${SPACE}) { addressLoyaltyPoints(address: $address) { points } } }`,
      { address },
    );
    return answer.body.data.space.addressLoyaltyPoints?.points as number | undefined;
  };

  /** The single form, by keyboard alone: focus, type, choose with Space, send with Enter. */
  async function adjustByKeyboard(direction: 'Grant' | 'Deduct', fields: string[]): Promise<void> {
    await page.getByLabel(`${direction} points`).focus();
    await page.keyboard.press('Space');
    const [address, points, reason] = fields;
    for (const [label, value] of [
      ['Address', address],
      ['Points', points],
      ['Reason', reason],
    ]) {
      await page.getByLabel(label, { exact: true }).focus();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(value);
    }
    await expect(page.locator('[data-points-submit]').textContent()).resolves.toBe(
      `${direction} points`,
    );
    await page.keyboard.press('Enter');
  }

  it('grants and deducts points for one address, and shows a refused form again with its input', async () => {
    await page.goto(`${base}/dashboard/spaces/${SPACE}`);
    await visit('space');

    await adjustByKeyboard('Grant', ['0xFEED', '40', 'Quest fix']);
    await page.waitForURL(`**/dashboard/spaces/${SPACE}?address=0xFEED`);
    expect(await texts('.alert.notice[role="status"]')).toEqual([
      'The points were granted.',
      expect.stringMatching(/^0xFEED is ranked 1 with 40 points\./),
    ]);
    await visit('granted');

    await adjustByKeyboard('Deduct', ['0xFEED', '15', 'Refund']);
    // The same address as before: the notice tells the new page.
    await page.getByText('The points were deducted.').waitFor();
    expect(page.url()).toBe(`${base}/dashboard/spaces/${SPACE}?address=0xFEED`);
    expect(await texts('.alert.notice[role="status"]')).toEqual([
      'The points were deducted.',
      expect.stringMatching(/^0xFEED is ranked 2 with 25 points\./),
    ]);
    await expect(pointsOf('0xFEED')).resolves.toBe(25);
    // The notice shows once: a reload shows the page without it.
    await page.reload();
    expect(await texts('.alert.notice[role="status"]')).toEqual([
      expect.stringMatching(/^0xFEED is ranked 2 with 25 points\./),
    ]);

    await adjustByKeyboard('Deduct', ['0x feed', '5', 'Typo in the address']);
    await page.waitForSelector('#points-title ~ [role="alert"]');
    expect(await texts('[role="alert"]')).toEqual([
      'address must be printable ASCII without spaces',
    ]);
    await expect(page.getByLabel('Address', { exact: true }).inputValue()).resolves.toBe('0x feed');
    await expect(page.getByLabel('Deduct points').isChecked()).resolves.toBe(true);
    await visit('refused');
    await expect(pointsOf('0xFEED')).resolves.toBe(25);
  });

  it('uploads a file, shows each line checked, applies it, and changes nothing the second time', async () => {
    await page.goto(`${base}/dashboard/spaces/${SPACE}`);
    await page.getByRole('link', { name: /Grant or deduct for many addresses/ }).click();
    await page.waitForURL(`**/dashboard/spaces/${SPACE}/points/uploads`);
    await visit('uploads');

    const uploadFile = async () => {
      await page.goto(`${base}/dashboard/spaces/${SPACE}/points/uploads`);
      await page.getByLabel('File', { exact: true }).setInputFiles({
        name: 'spring.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(CSV),
      });
      await page.getByLabel('Reason for lines without one').fill('Spring campaign');
      await page.getByRole('button', { name: 'Check the lines' }).click();
      await page.waitForURL(/\/points\/uploads\/[0-9a-f-]{36}$/);
    };

    await uploadFile();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(
      /spring\.csv/,
    );
    expect(await texts('table.upload-errors tbody tr')).toEqual([
      '5 address must be printable ASCII without spaces',
    ]);
    expect(await texts('table.upload-lines td[data-label="Reason"]')).toEqual([
      'Community call host',
      'Spring campaign',
      'Duplicate claim',
      'Bug report, critical',
    ]);
    expect(await texts('dt:text("Time of lines without one") + dd')).toEqual([
      'When the upload is applied',
    ]);
    await visit('preview');
    await page.getByRole('button', { name: 'Apply 4 lines' }).click();
    await page.waitForSelector('.alert.notice[role="status"]');
    expect((await texts('.alert.notice[role="status"]'))[0]).toMatch(
      /: 4 applied, 0 already applied, 0 refused\.$/,
    );
    await expect(pointsOf('0xA11CE')).resolves.toBe(20);
    await visit('applied');

    await uploadFile();
    await page.getByRole('button', { name: 'Apply 4 lines' }).click();
    await page.waitForSelector('.alert.notice[role="status"]');
    expect((await texts('.alert.notice[role="status"]'))[0]).toMatch(
      /: 0 applied, 4 already applied, 0 refused\.$/,
    );
    await expect(pointsOf('0xA11CE')).resolves.toBe(20);
    await expect(pointsOf('0xD00D')).resolves.toBe(3);
    await visit('reapplied');

    // Both uploads are listed.
    await page.getByRole('link', { name: 'Points uploads' }).click();
    expect(await texts('table.uploads td[data-label="Status"]')).toEqual(['Applied', 'Applied']);
  });

  it('refuses lines it cannot read in place, keeping what was pasted', async () => {
    await page.goto(`${base}/dashboard/spaces/${SPACE}/points/uploads`);
    await page.getByLabel('Lines', { exact: true }).fill('wallet,points\n0xA,1');
    await page.getByRole('button', { name: 'Check the lines' }).click();
    await page.waitForSelector('#upload-error [role="alert"]');
    expect(await texts('[role="alert"]')).toEqual([
      'Line 1, the header: unknown column "wallet": the columns are address, points, reason and occurredAt',
    ]);
    await expect(page.getByLabel('Lines', { exact: true }).inputValue()).resolves.toBe(
      'wallet,points\n0xA,1',
    );
    await visit('upload-refused');
  });

  it('shows the progress of a large upload and of its apply', async () => {
    const lines = Array.from({ length: BIG_LINES }, (_, i) => `0xB16${i % 5000},${(i % 9) + 1}`);
    await page.goto(`${base}/dashboard/spaces/${SPACE}/points/uploads`);
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'large.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(['address,points', ...lines].join('\n')),
    });
    await page.getByLabel('Reason for lines without one').fill('Large grant');
    // A slow uplink, as from home: the upload takes a few seconds, in sight.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 20,
      downloadThroughput: -1,
      uploadThroughput: 400_000,
    });
    await page.getByRole('button', { name: 'Check the lines' }).click({ noWaitAfter: true });
    await page.getByText(/^\d+% sent \([\d,]+ of [\d,]+ bytes\)$/).waitFor();
    await expect(page.getByLabel('Uploading').isVisible()).resolves.toBe(true);
    const sent = await page.locator('progress#points-upload-progress').getAttribute('value');
    expect(Number(sent)).toBeGreaterThan(0);
    await shoot('uploading');
    await page.waitForURL(/\/points\/uploads\/[0-9a-f-]{36}$/, { timeout: 60_000 });
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await expect(
      page.getByRole('button', { name: 'Apply 100,000 lines' }).isVisible(),
    ).resolves.toBe(true);
    await visit('large-preview');

    await page.getByRole('button', { name: 'Apply 100,000 lines' }).click({ noWaitAfter: true });
    await page.locator('progress#points-apply-progress').waitFor({ state: 'visible' });
    // Polled from the server while the apply runs: how many lines it has been through.
    await page.getByText(/^[\d,]+ of 100,000 lines applied$/).waitFor({ timeout: 60_000 });
    await page.waitForSelector('.alert.notice[role="status"]', { timeout: 120_000 });
    expect((await texts('.alert.notice[role="status"]'))[0]).toMatch(
      /: 100,000 applied, 0 already applied, 0 refused\.$/,
    );
    // 0xB160 has the lines 0, 5000, …, 95000.
    const expected = Array.from({ length: 20 }, (_, k) => ((k * 5000) % 9) + 1).reduce(
      (sum, points) => sum + points,
      0,
    );
    await expect(pointsOf('0xB160')).resolves.toBe(expected);
  });

  it('follows an apply on the server when a proxy gives up waiting for its answer', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `0xCAB${i % 4000},${(i % 5) + 1}`);
    await page.goto(`${base}/dashboard/spaces/${SPACE}/points/uploads`);
    await page.getByLabel('File', { exact: true }).setInputFiles({
      name: 'behind-a-proxy.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(['address,points', ...lines].join('\n')),
    });
    await page.getByLabel('Reason for lines without one').fill('Proxy');
    await page.getByRole('button', { name: 'Check the lines' }).click();
    await page.waitForURL(/\/points\/uploads\/[0-9a-f-]{36}$/);

    // A proxy in front of the service: it passes the apply on, and answers 504 before the service.
    let passedOn: Promise<unknown> | undefined;
    await page.route('**/apply', async (route) => {
      const request = route.request();
      const headers = Object.fromEntries(
        Object.entries(await request.allHeaders()).filter(
          ([name]) => !['host', 'content-length', 'connection'].includes(name),
        ),
      );
      passedOn = fetch(request.url(), {
        method: 'POST',
        headers,
        body: request.postData() ?? '',
        redirect: 'manual',
      }).then((answer) => answer.text());
      await new Promise((resolve) => setTimeout(resolve, 200));
      await route.fulfill({
        status: 504,
        contentType: 'text/html',
        body: '<html><body><h1>504 Gateway Time-out</h1></body></html>',
      });
    });
    await page.getByRole('button', { name: 'Apply 60,000 lines' }).click({ noWaitAfter: true });
    await page.waitForSelector('.alert.notice[role="status"]', { timeout: 120_000 });
    await page.unroute('**/apply');
    await passedOn;
    expect((await texts('.alert.notice[role="status"]'))[0]).toMatch(
      /: 60,000 applied, 0 already applied, 0 refused\.$/,
    );
    expect(await texts('[role="alert"]')).toEqual([]);
    // The proxy's 504, as Chromium logs it: expected here.
    const proxied = consoleErrors.findIndex((error) => /status of 504/.test(error));
    expect(proxied).toBeGreaterThanOrEqual(0);
    consoleErrors.splice(proxied, 1);
    await visit('apply-followed');
  });
});
