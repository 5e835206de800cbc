import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { tokenCreateCommand } from '../../src/host/cli/commands/token-create.command';
import { UsageError } from '../../src/host/cli/support/cli-args';
import { loadConfig } from '../../src/host/config/app-config';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const NEW_TOKEN = /id="new-token"[^>]*value="(lpt_[0-9A-Za-z]+)"/;
const alertOf = (page: string) => /role="alert">([^<]*)</.exec(page)?.[1];
const noticeOf = (page: string) => /class="alert notice" role="status">([^<]*)</.exec(page)?.[1];
const cookieNamed = (answer: { setCookies: string[] }, name: string) =>
  answer.setCookies.find((cookie) => cookie.startsWith(`${name}=`));

/**
 * The dashboard's forms as a browser meets them: every form answers 303 (Post/Redirect/Get), what
 * it made shows once on the page after (a new token in a sealed cookie, a notice in a cookie) and
 * never on a reload; duplicate token names are refused; a form sent after the session ended leads
 * back to its page; unknown addresses answer the dashboard's own 404 page.
 */
describe.each(DB_KINDS)('the dashboard forms on %s', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
    await t.load([{ type: 'space', id: 1, name: 'One' }]);
  });
  afterAll(() => t?.close());

  const signedIn = async () => {
    const client = new DashboardClient(base);
    expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
    return client;
  };
  const generate = async (client: DashboardClient, fields: Record<string, string>) =>
    client.request('/dashboard/settings/server-api/tokens', {
      method: 'POST',
      form: { _csrf: await client.formToken('/dashboard/settings'), scopes: 'query', ...fields },
    });
  const viaApi = async (client: DashboardClient, json: Record<string, unknown>) =>
    client.request('/settings/server-api/tokens', {
      method: 'POST',
      headers: { 'x-csrf-token': await client.csrfToken() },
      json,
    });
  const liveNamed = async (name: string) =>
    (await t.app.get(AccessTokensService).list()).filter((token) => token.name === name);

  it('redirects after generating a token and shows its value once, on the next page only', async () => {
    const client = await signedIn();
    const made = await generate(client, { name: 'prg-token' });
    expect(made.status).toBe(303);
    expect(made.headers.get('location')).toBe('/dashboard/settings');
    expect(made.text).not.toContain('lpt_');
    const sealed = cookieNamed(made, 'lb_reveal');
    expect(sealed).toMatch(/; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=120$/);

    const shown = await client.request('/dashboard/settings');
    const value = NEW_TOKEN.exec(shown.text)?.[1];
    expect(value).toBeDefined();
    expect(sealed).not.toContain(value);
    expect(shown.text).toContain('New API token “prg-token”');
    expect(cookieNamed(shown, 'lb_reveal')).toMatch(/Max-Age=0/);
    expect((await t.gql('{ __typename }', undefined, { token: value })).status).toBe(200);

    // A reload shows the list, not the value, and makes no second token.
    const reloaded = await client.request('/dashboard/settings');
    expect(reloaded.text).not.toContain(value);
    expect(reloaded.text).not.toMatch(NEW_TOKEN);
    expect(await liveNamed('prg-token')).toHaveLength(1);
  });

  it('shows the value on another instance of the deployment, and to no other session', async () => {
    const second = await startTestApp(kind, {}, t.db);
    try {
      const client = await signedIn();
      const made = await generate(client, { name: 'across-instances' });
      const cookies = client.cookieHeader();
      const page = await fetch(`${second.url.replace('/query', '')}/dashboard/settings`, {
        headers: { cookie: cookies },
      });
      expect(NEW_TOKEN.exec(await page.text())?.[1]).toMatch(/^lpt_/);

      const sealed = /^lb_reveal=([^;]+)/.exec(cookieNamed(made, 'lb_reveal')!)![1];
      const other = await signedIn();
      const stolen = await fetch(`${base}/dashboard/settings`, {
        headers: { cookie: `${other.cookieHeader()}; lb_reveal=${sealed}` },
      });
      expect(await stolen.text()).not.toMatch(NEW_TOKEN);
      expect(stolen.headers.getSetCookie().some((c) => /^lb_reveal=;.*Max-Age=0/.test(c))).toBe(
        true,
      );
    } finally {
      await second.app.close();
    }
  });

  it('redirects after rotating and after revoking, each told once', async () => {
    const client = await signedIn();
    await generate(client, { name: 'to-rotate' });
    await client.request('/dashboard/settings');
    const [token] = await liveNamed('to-rotate');
    const csrf = await client.formToken('/dashboard/settings');
    const rotated = await client.request(
      `/dashboard/settings/server-api/tokens/${token.id}/rotate`,
      {
        method: 'POST',
        form: { _csrf: csrf, graceSeconds: '0' },
      },
    );
    expect(rotated.status).toBe(303);
    expect(rotated.headers.get('location')).toBe('/dashboard/settings');
    const shown = await client.request('/dashboard/settings');
    expect(shown.text).toContain('New value for “to-rotate”');
    expect(shown.text).toContain('The old value stopped working at once.');
    const value = NEW_TOKEN.exec(shown.text)![1];
    expect((await client.request('/dashboard/settings')).text).not.toContain(value);

    const [successor] = await liveNamed('to-rotate');
    const revoked = await client.request(
      `/dashboard/settings/server-api/tokens/${successor.id}/revoke`,
      { method: 'POST', form: { _csrf: csrf } },
    );
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/dashboard/settings');
    expect(cookieNamed(revoked, 'lb_notice')).toMatch(/^lb_notice=token\.revoked;.*HttpOnly/);
    const told = await client.request('/dashboard/settings');
    expect(noticeOf(told.text)).toBe('The token was revoked.');
    expect(noticeOf((await client.request('/dashboard/settings')).text)).toBeUndefined();
  });

  it('says "You are signed out." once after signing out', async () => {
    const client = await signedIn();
    const out = await client.request('/dashboard/sign-out', {
      method: 'POST',
      form: { _csrf: await client.formToken('/dashboard/settings') },
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/dashboard/sign-in');
    expect(noticeOf((await client.request('/dashboard/sign-in')).text)).toBe('You are signed out.');
    expect(noticeOf((await client.request('/dashboard/sign-in')).text)).toBeUndefined();
    // A notice cookie someone else wrote picks no text of its own.
    const planted = await fetch(`${base}/dashboard/sign-in`, {
      headers: { cookie: 'lb_notice=%3Cb%3Ehello' },
    });
    expect(noticeOf(await planted.text())).toBeUndefined();
  });

  it('leads a form sent after the session ended to sign-in, and back to its page', async () => {
    const client = await signedIn();
    const csrf = await client.formToken('/dashboard/spaces/1/members');
    // The session ends (elsewhere, or by its age) while the page is open.
    const stale = new DashboardClient(base);
    const invite = await stale.request('/dashboard/spaces/1/invitations', {
      method: 'POST',
      headers: { referer: `${base}/dashboard/spaces/1/members` },
      form: { _csrf: csrf, email: 'late@example.com', role: 'editor' },
    });
    expect(invite.status).toBe(303);
    expect(invite.headers.get('location')).toBe(
      '/dashboard/sign-in?next=%2Fdashboard%2Fspaces%2F1%2Fmembers',
    );
    const signInPage = await stale.request(invite.headers.get('location')!);
    expect(noticeOf(signInPage.text)).toContain('Your session ended before the form was sent.');
    expect(signInPage.text).toContain('name="next" value="/dashboard/spaces/1/members"');
    const back = await stale.request('/dashboard/sign-in', {
      method: 'POST',
      form: {
        _csrf: /name="_csrf" value="([^"]+)"/.exec(signInPage.text)![1],
        email: EMAIL,
        password: PASSWORD,
        next: '/dashboard/spaces/1/members',
      },
    });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/dashboard/spaces/1/members');
    // A page asked for while signed out is the one signing in leads to.
    const anonymous = await new DashboardClient(base).request('/dashboard/audit?spaceId=1');
    expect(anonymous.headers.get('location')).toBe(
      '/dashboard/sign-in?next=%2Fdashboard%2Faudit%3FspaceId%3D1',
    );
    // Signed in already, the sign-in page goes straight there.
    const there = await client.request('/dashboard/sign-in?next=%2Fdashboard%2Fspaces');
    expect(there.headers.get('location')).toBe('/dashboard/spaces');
  });

  it('never leads anywhere off the dashboard after signing in', async () => {
    for (const next of [
      'https://evil.example/dashboard/spaces',
      '//evil.example/dashboard/spaces',
      '/dashboard/../query',
      '/dashboard\\@evil.example',
      '/dashboard/sign-out',
    ]) {
      const client = new DashboardClient(base);
      const form = await client.request(`/dashboard/sign-in?next=${encodeURIComponent(next)}`);
      expect(form.text).not.toContain('name="next"');
      const answer = await client.request('/dashboard/sign-in', {
        method: 'POST',
        form: {
          _csrf: /name="_csrf" value="([^"]+)"/.exec(form.text)![1],
          email: EMAIL,
          password: PASSWORD,
          next,
        },
      });
      expect({ next, location: answer.headers.get('location') }).toEqual({
        next,
        location: '/dashboard/settings',
      });
    }
  });

  it('refuses a token name a live token of the same owner has, in any letter case', async () => {
    const client = await signedIn();
    expect((await viaApi(client, { name: 'Nightly export' })).status).toBe(201);
    const twice = await viaApi(client, { name: 'nightly EXPORT' });
    expect(twice.status).toBe(409);
    expect(JSON.parse(twice.text).errors[0]).toMatchObject({
      message:
        'A live token of the deployment is named "nightly EXPORT" already: choose another name, or rotate or revoke that token',
      extensions: { code: 'ALREADY_EXISTS', http_status: 409 },
    });
    // The page agrees: 409, the message, the form as it was.
    const page = await generate(client, { name: 'NIGHTLY export' });
    expect(page.status).toBe(409);
    expect(alertOf(page.text)).toContain('is named &quot;NIGHTLY export&quot; already');
    expect(page.text).toContain('value="NIGHTLY export"');
    expect(page.text).not.toMatch(NEW_TOKEN);
    expect(await liveNamed('nightly EXPORT')).toEqual([]);

    // Another owner may use the name; so may a token once the old one is revoked or expired.
    expect((await viaApi(client, { name: 'Nightly export', spaceId: 1 })).status).toBe(201);
    const [first] = await liveNamed('Nightly export');
    await client.request(`/settings/server-api/tokens/${first.id}`, {
      method: 'DELETE',
      headers: { 'x-csrf-token': await client.csrfToken() },
    });
    expect((await viaApi(client, { name: 'nightly export' })).status).toBe(201);
    await t.app
      .get(AccessTokensService)
      .create('short lived', ['query'], { expiresAt: Date.now() + 300 });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await viaApi(client, { name: 'Short lived' })).status).toBe(201);
  });

  it('lets one of two creations of one name at once through', async () => {
    const client = await signedIn();
    const answers = await Promise.all([
      viaApi(client, { name: 'raced' }),
      viaApi(client, { name: 'RACED' }),
      viaApi(client, { name: 'Raced' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
    const live = (await t.app.get(AccessTokensService).list()).filter(
      (token) => token.name.toLowerCase() === 'raced',
    );
    expect(live).toHaveLength(1);
  });

  it('refuses a duplicate name on the command line as on the page', async () => {
    const client = await signedIn();
    expect((await viaApi(client, { name: 'cli twin' })).status).toBe(201);
    const config = loadConfig({ DATABASE_URL: t.db.url });
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let refusal: unknown;
    try {
      refusal = await tokenCreateCommand
        .run({ name: 'CLI twin', scopes: ['query'], spaceId: null, expiresAt: null }, config)
        .catch((error: unknown) => error);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    // A usage error: the command exits 2 with the message, and prints no token.
    expect(refusal).toBeInstanceOf(UsageError);
    expect((refusal as Error).message).toBe(
      'A live token of the deployment is named "CLI twin" already: choose another name, or rotate or revoke that token',
    );
    expect(stdout).not.toHaveBeenCalled();
    expect(await liveNamed('CLI twin')).toEqual([]);
  });

  it('answers unknown dashboard addresses with its 404 page, signed in or not, and others with the envelope', async () => {
    const client = await signedIn();
    for (const who of [client, new DashboardClient(base)]) {
      const page = await who.request('/dashboard/no/such/page?x=1');
      expect(page.status).toBe(404);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.text).toContain('<h1>Not found</h1>');
      expect(alertOf(page.text)).toBe('There is no page at this address.');
    }
    const signedInPage = await client.request('/dashboard/nope');
    expect(signedInPage.text).toContain('Sign out');
    expect(signedInPage.text).toContain('<a href="/dashboard/spaces">← Spaces</a>');
    const anonymousPage = await new DashboardClient(base).request('/dashboard/nope');
    expect(anonymousPage.text).not.toContain('Sign out');
    expect(anonymousPage.text).toContain('<a href="/dashboard/sign-in">← Sign in</a>');
    // A form address opened as a page: 405 with Allow, still a page.
    const method = await client.request('/dashboard/sign-out');
    expect([method.status, method.headers.get('allow')]).toEqual([405, 'POST']);
    expect(method.headers.get('content-type')).toMatch(/^text\/html/);
    const posted = await client.request('/dashboard/nope', { method: 'POST', form: { a: 'b' } });
    expect(posted.status).toBe(404);
    expect(posted.headers.get('content-type')).toMatch(/^text\/html/);
    // Elsewhere the API's envelope, as ever.
    const api = await client.request('/nope');
    expect(api.status).toBe(404);
    expect(JSON.parse(api.text).errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await client.request('/dashboardx')).headers.get('content-type')).toMatch(
      /application\/json/,
    );
  });

  it('serves its icon, at /favicon.ico too, and names it on every page', async () => {
    for (const path of ['/favicon.ico', '/dashboard/assets/favicon.svg']) {
      const icon = await fetch(`${base}${path}`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toBe('image/svg+xml');
      expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
    const page = await new DashboardClient(base).request('/dashboard/sign-in');
    expect(page.text).toContain(
      '<link rel="icon" type="image/svg+xml" href="/dashboard/assets/favicon.svg" />',
    );
  });
});
