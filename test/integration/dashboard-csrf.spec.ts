import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { hostDataSourceOptions } from '../../src/host/config/host-data-source';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { loadHostSecret } from '../../src/host/dashboard/host-secrets';
import { SignInSecret1764400000002 } from '../../src/host/dashboard/migrations/1764400000002-sign-in-secret';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { DashboardClient } from '../utils/dashboard-client';
import { createTestDatabase, DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';

const alertOf = (page: string) => /role="alert">([^<]+)</.exec(page)?.[1];
const signedInBy = (answer: { setCookies: string[] }) =>
  answer.setCookies.some((c) => c.startsWith('lb_session=') && !/Max-Age=0/.test(c));

describe.each(DB_KINDS)('the dashboard CSRF checks on %s', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
  });
  afterAll(() => t?.close());

  /** POSTs the sign-in form as `cookie` and `_csrf` say, with `headers`, from no browser at all. */
  const postSignIn = async (cookie: string | null, csrf: string, headers = {}) => {
    const client = new DashboardClient(base);
    return client.request('/dashboard/sign-in', {
      method: 'POST',
      headers: { ...(cookie === null ? {} : { cookie: `lb_signin_csrf=${cookie}` }), ...headers },
      form: { _csrf: csrf, email: EMAIL, password: PASSWORD },
    });
  };

  /** The sign-in form as a browser gets it: the cookie's value and the form's field. */
  const realPair = async () => {
    const page = await fetch(`${base}/dashboard/sign-in`);
    const cookie = page.headers
      .getSetCookie()
      .map((c) => /^lb_signin_csrf=([^;]*)/.exec(c)?.[1])
      .find(Boolean);
    const field = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
    if (!cookie || !field) throw new Error('no sign-in form');
    return { cookie, field };
  };

  it('refuses a planted cookie equal to a chosen form value: the plain double submit', async () => {
    for (const chosen of ['chosen-by-the-attacker', 'A'.repeat(43), (await realPair()).cookie]) {
      const answer = await postSignIn(chosen, chosen);
      expect(answer.status).toBe(403);
      expect(alertOf(answer.text)).toBe('The sign-in form expired. Please try again.');
      expect(signedInBy(answer)).toBe(false);
    }
  });

  it("refuses a real form's field with another cookie, and a real cookie with another field", async () => {
    const [first, second] = [await realPair(), await realPair()];
    for (const [cookie, field] of [
      [second.cookie, first.field],
      [first.cookie, second.field],
      [first.cookie, first.cookie],
    ]) {
      const answer = await postSignIn(cookie, field);
      expect(answer.status).toBe(403);
      expect(signedInBy(answer)).toBe(false);
    }
  });

  it('signs in with the pair of the real form, from a browser and from a script', async () => {
    const browser = new DashboardClient(base);
    const signedIn = await browser.signIn(EMAIL, PASSWORD);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/dashboard/settings');
    expect((await browser.request('/dashboard/settings')).status).toBe(200);
    // A script sends neither Origin nor Sec-Fetch-Site: the pair alone decides.
    const { cookie, field } = await realPair();
    const scripted = await postSignIn(cookie, field);
    expect(scripted.status).toBe(303);
    expect(signedInBy(scripted)).toBe(true);
  });

  it('refuses the sign-in form sent cross-site or from a sibling site, even with a real pair and no Origin', async () => {
    for (const site of ['cross-site', 'same-site', 'something else']) {
      const { cookie, field } = await realPair();
      const answer = await postSignIn(cookie, field, { 'sec-fetch-site': site });
      expect({ site, status: answer.status }).toEqual({ site, status: 403 });
      expect(signedInBy(answer)).toBe(false);
    }
    const { cookie, field } = await realPair();
    const foreignOrigin = await postSignIn(cookie, field, {
      'sec-fetch-site': 'same-origin',
      origin: 'https://evil.example',
    });
    expect(foreignOrigin.status).toBe(403);
    for (const site of ['same-origin', 'none']) {
      const pair = await realPair();
      const answer = await postSignIn(pair.cookie, pair.field, {
        'sec-fetch-site': site,
        origin: base,
      });
      expect({ site, status: answer.status }).toEqual({ site, status: 303 });
    }
  });

  it('refuses session-protected changes sent cross-site or same-site, even with the session token', async () => {
    const client = new DashboardClient(base);
    expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
    const csrf = await client.csrfToken();
    const names = async () =>
      (
        JSON.parse((await client.request('/settings/server-api/tokens')).text) as Array<{
          name: string;
        }>
      ).map((token) => token.name);
    for (const site of ['cross-site', 'same-site']) {
      const refused = await client.request('/settings/server-api/tokens', {
        method: 'POST',
        headers: { 'x-csrf-token': csrf, 'sec-fetch-site': site },
        json: { name: `from ${site}` },
      });
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text).errors[0].extensions).toMatchObject({
        code: 'CSRF_CHECK_FAILED',
        http_status: 403,
      });
      const formToken = await client.formToken('/dashboard/settings');
      const form = await client.request('/dashboard/settings/server-api/tokens', {
        method: 'POST',
        headers: { 'sec-fetch-site': site },
        form: { _csrf: formToken, name: `form from ${site}`, scopes: 'query' },
      });
      expect(form.status).toBe(403);
      const revoke = await client.request('/settings/server-api/tokens/any', {
        method: 'DELETE',
        headers: { 'x-csrf-token': csrf, 'sec-fetch-site': site },
      });
      expect(revoke.status).toBe(403);
    }
    expect((await names()).filter((name) => name.includes('from'))).toEqual([]);
    const sameOrigin = await client.request('/settings/server-api/tokens', {
      method: 'POST',
      headers: { 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin', origin: base },
      json: { name: 'from same-origin' },
    });
    expect(sameOrigin.status).toBe(201);
    expect(await names()).toContain('from same-origin');
  });

  it("signs the invitation form's pair as the sign-in form's: a planted double submit is refused", async () => {
    await t.load([{ type: 'space', id: 7, name: 'Invited' }]);
    const operator = new DashboardClient(base);
    expect((await operator.signIn(EMAIL, PASSWORD)).status).toBe(303);
    const invited = await operator.request('/settings/spaces/7/invitations', {
      method: 'POST',
      headers: { 'x-csrf-token': await operator.csrfToken() },
      json: { email: 'invitee@example.com', role: 'viewer' },
    });
    expect(invited.status).toBe(201);
    const path = new URL((JSON.parse(invited.text) as { link: string }).link).pathname;
    const fields = {
      email: 'invitee@example.com',
      name: 'Invitee',
      password: PASSWORD,
      passwordRepeat: PASSWORD,
    };
    const planted = await new DashboardClient(base).request(path, {
      method: 'POST',
      headers: { cookie: 'lb_signin_csrf=chosen' },
      form: { _csrf: 'chosen', ...fields },
    });
    expect(planted.status).toBe(403);
    expect(signedInBy(planted)).toBe(false);
    const invitee = new DashboardClient(base);
    const joined = await invitee.request(path, {
      method: 'POST',
      form: { _csrf: await invitee.formToken(path), ...fields },
    });
    expect(joined.status).toBe(303);
    expect(joined.headers.get('location')).toBe('/dashboard/spaces/7');
    expect(signedInBy(joined)).toBe(true);
  });

  it('signs forms with one secret per deployment: a form from one instance signs in on another', async () => {
    const second = await startTestApp(kind, {}, t.db);
    try {
      const fromFirst = await realPair();
      const other = new DashboardClient(second.url.replace('/query', ''));
      const answer = await other.request('/dashboard/sign-in', {
        method: 'POST',
        headers: { cookie: `lb_signin_csrf=${fromFirst.cookie}` },
        form: { _csrf: fromFirst.field, email: EMAIL, password: PASSWORD },
      });
      expect(answer.status).toBe(303);
    } finally {
      await second.app.close();
    }
    const rows = await t.app
      .get<DataSource>(getDataSourceToken())
      .query<Array<{ name: string; value: string }>>(
        'SELECT name, value FROM host_secrets ORDER BY name',
      );
    // The sign-in forms' key, and the key sealing what a session is shown once.
    expect(rows.map((row) => row.name)).toEqual(['dashboard_reveal', 'sign_in_csrf']);
    for (const row of rows) expect(Buffer.from(row.value, 'base64')).toHaveLength(32);
  });

  it('agrees on one secret when instances create it at the same time, in a table its migration builds and reverts', async () => {
    const db = await createTestDatabase(kind);
    const sources: DataSource[] = [];
    try {
      const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
      const migrator = await new DataSource(options).initialize();
      sources.push(migrator);
      await migrator.runMigrations();
      for (let i = 0; i < 4; i++) sources.push(await new DataSource(options).initialize());
      // The migration builds host_secrets as its entity describes.
      const pending = await migrator.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query).filter((q) => /host_secrets/.test(q))).toEqual(
        [],
      );
      const secrets = await Promise.all(sources.map((s) => loadHostSecret(s, 'sign_in_csrf')));
      expect(new Set(secrets.map((s) => s.toString('hex'))).size).toBe(1);
      const [{ n }] = await migrator.query('SELECT COUNT(*) AS n FROM host_secrets');
      expect(Number(n)).toBe(1);
      const runner = migrator.createQueryRunner();
      try {
        await new SignInSecret1764400000002().down(runner);
        expect(await runner.hasTable('host_secrets')).toBe(false);
        await new SignInSecret1764400000002().up(runner);
        expect(await runner.hasTable('host_secrets')).toBe(true);
      } finally {
        await runner.release();
      }
    } finally {
      for (const s of sources) await s.destroy();
      await db.drop();
    }
  });
});
