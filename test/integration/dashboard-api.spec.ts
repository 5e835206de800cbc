import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { runCli } from '../utils/cli';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';

describe('sign-in limits per account and address', () => {
  it('locks an account out for one address only, so the real admin still signs in elsewhere', async () => {
    const t = await startTestApp('sqlite', { TRUST_PROXY: 'true' });
    try {
      await t.app.get(AdminsService).create(EMAIL, PASSWORD);
      const from = (address: string) => {
        const client = new DashboardClient(t.url.replace('/query', ''));
        const request = client.request.bind(client);
        client.request = (path, init = {}) =>
          request(path, {
            ...init,
            headers: { ...(init.headers as object), 'x-forwarded-for': address },
          });
        return client;
      };
      const attacker = from('203.0.113.7');
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++)
        statuses.push((await attacker.signIn(EMAIL, `guess ${i}`)).status);
      expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
      expect(statuses.at(-1)).toBe(429);
      expect((await attacker.signIn(EMAIL, PASSWORD)).status).toBe(429);
      expect((await from('198.51.100.20').signIn(EMAIL, PASSWORD)).status).toBe(303);
    } finally {
      await t.close();
    }
  });
});

describe.each(DB_KINDS)('the settings endpoint and dashboard sign-in on %s', (kind) => {
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
  });
  afterAll(() => t?.close());

  const signedIn = async () => {
    const client = new DashboardClient(base);
    expect((await client.signIn(EMAIL, PASSWORD)).status).toBe(303);
    return client;
  };

  it('refuses every call without a signed-in session with 401 in the envelope', async () => {
    const anonymous = new DashboardClient(base);
    for (const [method, path] of [
      ['GET', '/settings/server-api/tokens'],
      ['POST', '/settings/server-api/tokens'],
      ['DELETE', '/settings/server-api/tokens/x'],
    ]) {
      const response = await anonymous.request(path, {
        method,
        json: method === 'POST' ? { name: 'n' } : undefined,
      });
      expect(response.status).toBe(401);
      expect(JSON.parse(response.text).errors[0].extensions).toMatchObject({
        code: 'SIGN_IN_REQUIRED',
        http_status: 401,
      });
    }
    // A /query token is no dashboard session.
    const withToken = await anonymous.request('/settings/server-api/tokens', {
      headers: { 'access-token': t.token },
    });
    expect(withToken.status).toBe(401);
  });

  it('refuses state changes without the session CSRF token, or from another origin', async () => {
    const client = await signedIn();
    const csrf = await client.csrfToken();
    for (const headers of [
      {},
      { 'x-csrf-token': 'wrong' },
      { 'x-csrf-token': csrf, origin: 'https://evil.example' },
    ] as Array<Record<string, string>>) {
      const response = await client.request('/settings/server-api/tokens', {
        method: 'POST',
        headers,
        json: { name: 'csrf' },
      });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.text).errors[0].extensions.code).toBe('CSRF_CHECK_FAILED');
    }
    const form = await client.request('/dashboard/settings/server-api/tokens', {
      method: 'POST',
      form: { _csrf: 'forged', name: 'x' },
    });
    expect(form.status).toBe(403);
    const list = JSON.parse((await client.request('/settings/server-api/tokens')).text) as Array<{
      name: string;
    }>;
    expect(list.map((token) => token.name)).not.toContain('csrf');
  });

  it('creates a token shown once: never in a list, never stored, never logged', async () => {
    const client = await signedIn();
    const csrf = await client.csrfToken();
    t.logs.lines.length = 0;
    t.recorder.logged.length = 0;
    const created = await client.request('/settings/server-api/tokens', {
      method: 'POST',
      headers: { 'x-csrf-token': csrf },
      json: { name: 'exporter' },
    });
    expect(created.status).toBe(201);
    const body = JSON.parse(created.text);
    expect(Object.keys(body).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'name',
      'prefix',
      'scopes',
      'spaceId',
      'token',
    ]);
    // An operator's token without a space or an expiry: a deployment token that never expires.
    expect(body).toMatchObject({
      name: 'exporter',
      prefix: body.token.slice(0, 12),
      scopes: ['query'],
      spaceId: null,
      expiresAt: null,
    });
    expect(body.token).toMatch(/^lpt_[0-9A-Za-z]{49}$/);
    expect(created.headers.get('cache-control')).toBe('no-store');

    expect((await t.gql('{ __typename }', undefined, { token: body.token })).status).toBe(200);
    const list = await client.request('/settings/server-api/tokens');
    expect(list.text).not.toContain(body.token);
    const entry = (JSON.parse(list.text) as Array<Record<string, unknown>>).find(
      (token) => token.id === body.id,
    );
    expect(entry).toEqual({
      id: body.id,
      name: 'exporter',
      prefix: body.prefix,
      scopes: ['query'],
      spaceId: null,
      createdAt: body.createdAt,
      expiresAt: null,
      lastUsedAt: expect.any(String),
      lastUsedFrom: expect.any(String),
      // The signed-in account that made it.
      createdBy: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });

    const rows: Array<Record<string, unknown>> = await runSql(
      t.app.get<DataSource>(getDataSourceToken()),
      'SELECT * FROM access_tokens',
    );
    expect(JSON.stringify(rows)).not.toContain(body.token);
    expect(rows.find((row) => row.id === body.id)?.token_hash).toBe(
      createHash('sha256').update(body.token).digest('hex'),
    );
    const everything = [...t.logs.lines, ...t.recorder.logged].join('\n');
    expect(t.recorder.logged.some((line) => /INSERT INTO .access_tokens./.test(line))).toBe(true);
    expect(everything).not.toContain(body.token);
  });

  it('revokes a token: /query refuses it at once, and a second revoke is 404', async () => {
    const client = await signedIn();
    const csrf = await client.csrfToken();
    const { id, token } = JSON.parse(
      (
        await client.request('/settings/server-api/tokens', {
          method: 'POST',
          headers: { 'x-csrf-token': csrf },
          json: { name: 'short' },
        })
      ).text,
    );
    expect((await t.gql('{ __typename }', undefined, { token })).status).toBe(200);
    const revoked = await client.request(`/settings/server-api/tokens/${id}`, {
      method: 'DELETE',
      headers: { 'x-csrf-token': csrf },
    });
    expect(revoked.status).toBe(204);
    expect((await t.gql('{ __typename }', undefined, { token })).status).toBe(401);
    const again = await client.request(`/settings/server-api/tokens/${id}`, {
      method: 'DELETE',
      headers: { 'x-csrf-token': csrf },
    });
    expect(again.status).toBe(404);
    expect(JSON.parse(again.text).errors[0].extensions.code).toBe('TOKEN_NOT_FOUND');
    expect(
      (
        JSON.parse((await client.request('/settings/server-api/tokens')).text) as Array<{
          id: string;
        }>
      ).map((t) => t.id),
    ).not.toContain(id);
  });

  it('validates names with a clear JSON error', async () => {
    const client = await signedIn();
    const csrf = await client.csrfToken();
    for (const json of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 42 }]) {
      const response = await client.request('/settings/server-api/tokens', {
        method: 'POST',
        headers: { 'x-csrf-token': csrf },
        json,
      });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).errors[0].extensions.code).toBe('INVALID_ARGUMENT');
    }
  });

  describe('scopes', () => {
    const create = async (client: DashboardClient, json: unknown) =>
      client.request('/settings/server-api/tokens', {
        method: 'POST',
        headers: { 'x-csrf-token': await client.csrfToken() },
        json,
      });
    const listed = async (client: DashboardClient) =>
      JSON.parse((await client.request('/settings/server-api/tokens')).text) as Array<{
        id: string;
        name: string;
        scopes: string[];
      }>;
    const storedScopes = async (name: string) =>
      (
        await runSql<{ scopes: string }>(
          t.app.get<DataSource>(getDataSourceToken()),
          'SELECT scopes FROM access_tokens WHERE name = ?',
          [name],
        )
      ).map((row) => row.scopes);

    it.each([
      [['query', 'ingest'], ['ingest', 'query'], 'ingest,query', 200, 200],
      [['ingest', 'ingest'], ['ingest'], 'ingest', 403, 200],
      [['query'], ['query'], 'query', 200, 403],
      [undefined, ['query'], 'query', 200, 403],
    ])(
      'creates a token with scopes %j: answers and lists %j, stores %s, /query answers %i, /ingest %i',
      async (scopes, expected, stored, status, ingestStatus) => {
        const client = await signedIn();
        const name = `scoped ${JSON.stringify(scopes)}`;
        const response = await create(client, scopes === undefined ? { name } : { name, scopes });
        expect(response.status).toBe(201);
        const body = JSON.parse(response.text);
        expect(body.scopes).toEqual(expected);
        expect((await listed(client)).find((token) => token.id === body.id)).toMatchObject({
          name,
          scopes: expected,
        });
        expect(await storedScopes(name)).toEqual([stored]);
        const query = await t.gql('{ __typename }', undefined, { token: body.token });
        expect(query.status).toBe(status);
        if (status === 403)
          expect(query.body.errors[0].extensions).toMatchObject({
            code: 'INSUFFICIENT_SCOPE',
            http_status: 403,
          });
        const ingest = await fetch(t.url.replace(/\/query$/, '/ingest'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': body.token },
          body: '[]',
        });
        expect(ingest.status).toBe(ingestStatus);
        const answer = (await ingest.json()) as any;
        if (ingestStatus === 200)
          expect(answer).toEqual({ accepted: 0, duplicates: 0, refused: 0, results: [] });
        else expect(answer.errors[0].message).toBe("Access token lacks the 'ingest' scope");
      },
    );

    it.each([
      ['an unknown scope', ['admin'], 'Unknown token scope "admin": the scopes are query, ingest'],
      [
        'an unknown scope beside a known one',
        ['query', 'write'],
        'Unknown token scope "write": the scopes are query, ingest',
      ],
      ['an empty list', [], 'A token needs at least one scope (query, ingest)'],
      ['a string', 'query,ingest', 'scopes must be a list of token scopes (query, ingest)'],
      ['null', null, 'scopes must be a list of token scopes (query, ingest)'],
      ['a number in the list', [1], 'Unknown token scope 1: the scopes are query, ingest'],
    ])(
      'refuses %s with 400 INVALID_ARGUMENT and creates nothing',
      async (_label, scopes, message) => {
        const client = await signedIn();
        const before = await listed(client);
        const response = await create(client, { name: 'refused-scopes', scopes });
        expect(response.status).toBe(400);
        const error = JSON.parse(response.text).errors[0];
        expect(error.message).toBe(message);
        expect(error.extensions).toMatchObject({
          code: 'INVALID_ARGUMENT',
          category: 'VALIDATION',
          http_status: 400,
        });
        expect(await listed(client)).toEqual(before);
        expect(await storedScopes('refused-scopes')).toEqual([]);
      },
    );

    it('generates a token with the checked scopes from the dashboard form, and shows them', async () => {
      const client = await signedIn();
      const page = await client.request('/dashboard/settings');
      expect(page.text).toMatch(/<input[^>]*id="scope-query"[^>]*checked/);
      expect(page.text).not.toMatch(/<input[^>]*id="scope-ingest"[^>]*checked/);
      const csrf = await client.formToken('/dashboard/settings');
      const sent = await client.request('/dashboard/settings/server-api/tokens', {
        method: 'POST',
        form: { _csrf: csrf, name: 'form-both', scopes: ['query', 'ingest'] },
      });
      expect(sent.status).toBe(303);
      const created = await client.request(sent.headers.get('location')!);
      expect(created.text).toMatch(
        /Scopes: <span class="scopes"\s*><code class="scope">ingest<\/code>, <code class="scope">query<\/code><\/span/,
      );
      expect(await storedScopes('form-both')).toEqual(['ingest,query']);

      const ingestOnly = await client.request('/dashboard/settings/server-api/tokens', {
        method: 'POST',
        form: { _csrf: csrf, name: 'form-ingest', scopes: 'ingest' },
      });
      expect(ingestOnly.status).toBe(303);
      expect(await storedScopes('form-ingest')).toEqual(['ingest']);
      const list = await client.request('/dashboard/settings');
      expect(list.text).toMatch(
        /<td data-label="Name">form-ingest<\/td>\s*<td data-label="Token">.*?<\/td>\s*<td data-label="Scopes"><span class="scopes"\s*><code class="scope">ingest<\/code><\/span\s*><\/td>/s,
      );
    });

    it('refuses the form with no scope, or an unknown one, with a clear error and keeps the name', async () => {
      const client = await signedIn();
      const csrf = await client.formToken('/dashboard/settings');
      for (const [scopes, message] of [
        [undefined, 'A token needs at least one scope (query, ingest)'],
        [['query', '<b>admin</b>'], 'Unknown token scope &quot;&lt;b&gt;admin&lt;/b&gt;&quot;'],
      ] as const) {
        const refused = await client.request('/dashboard/settings/server-api/tokens', {
          method: 'POST',
          form: {
            _csrf: csrf,
            name: 'no-scope <i>',
            ...(scopes ? { scopes: [...scopes] } : {}),
          },
        });
        expect(refused.status).toBe(400);
        expect(refused.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(/role="alert">([^<]*)</.exec(refused.text)?.[1]).toContain(message);
        expect(refused.text).not.toContain('<b>admin</b>');
        expect(refused.text).not.toContain('<i>');
        expect(refused.text).toContain('value="no-scope &lt;i&gt;"');
      }
      expect(await storedScopes('no-scope <i>')).toEqual([]);
    });
  });

  it('keeps sessions in HttpOnly SameSite cookies and ends them on sign-out', async () => {
    const client = new DashboardClient(base);
    const response = await client.signIn(EMAIL, PASSWORD);
    expect(response.headers.get('location')).toBe('/dashboard/settings');
    expect(response.setCookies.find((c) => c.startsWith('lb_session='))).toMatch(
      /HttpOnly; SameSite=Strict/,
    );
    const stolen = client.cookieHeader();
    expect((await client.request('/dashboard/settings')).status).toBe(200);
    const csrf = await client.formToken('/dashboard/settings');
    expect(
      (await client.request('/dashboard/sign-out', { method: 'POST', form: { _csrf: csrf } }))
        .status,
    ).toBe(303);
    // The old cookie no longer opens anything.
    const replay = await fetch(`${base}/dashboard/settings`, {
      headers: { cookie: stolen },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/dashboard/sign-in');
  });

  it('answers a wrong password and an unknown email alike, slowly, and stops guessing', async () => {
    const wrong = new DashboardClient(base);
    const unknown = new DashboardClient(base);
    const started = Date.now();
    const a = await wrong.signIn(EMAIL, 'not the password at all');
    const b = await unknown.signIn('nobody@example.com', 'not the password at all');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect([a.status, b.status]).toEqual([401, 401]);
    const message = (page: string) => /role="alert">([^<]+)</.exec(page)?.[1];
    expect(message(a.text)).toBe('Email or password is incorrect.');
    expect(message(b.text)).toBe(message(a.text));
    const guesser = new DashboardClient(base);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++)
      statuses.push((await guesser.signIn('target@example.com', `guess ${i}`)).status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const blocked = await guesser.signIn('target@example.com', 'one more');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers junk input with a clear refusal, never a 500', async () => {
    const raw = (path: string, init: RequestInit) =>
      fetch(`${base}${path}`, { redirect: 'manual', ...init });
    // No sign-in CSRF cookie and an empty field: refused, not signed in.
    const empty = await raw('/dashboard/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: '', email: EMAIL, password: PASSWORD }).toString(),
    });
    expect(empty.status).toBe(403);
    expect(
      empty.headers.getSetCookie().some((c) => c.startsWith('lb_session=') && !/Max-Age=0/.test(c)),
    ).toBe(false);
    expect((await raw('/dashboard/sign-in', { method: 'POST' })).status).toBe(403);
    expect(
      (await raw('/settings/server-api/tokens', { headers: { cookie: 'lb_session=%' } })).status,
    ).toBe(401);
    expect(
      (await raw('/dashboard/settings', { headers: { cookie: 'lb_session=%E0%A4%A' } })).status,
    ).toBe(303);
    const client = await signedIn();
    const unicode = await client.request('/settings/server-api/tokens', {
      method: 'POST',
      headers: { 'x-csrf-token': 'é'.repeat(43) },
      json: { name: 'x' },
    });
    expect(unicode.status).toBe(403);
    expect(
      (await client.request('/dashboard/settings/server-api/tokens', { method: 'POST' })).status,
    ).toBe(403);
    await t.load([{ type: 'space', id: 1, name: 'One' }]);
    expect(
      (await client.request('/dashboard/spaces/1?address=a&address=b&after=x&after=y')).status,
    ).toBe(200);
  });

  it('creates admins from the command line, with the password from standard input only', async () => {
    const env = { DATABASE_URL: t.db.url };
    const ok = await runCli(
      ['admin', 'create', '--email', 'second@example.com'],
      env,
      'another long passphrase\n',
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe('');
    expect(
      (await runCli(['admin', 'create', '--email', 'x@example.com', '--password', 'p'], env)).code,
    ).toBe(2);
    const short = await runCli(['admin', 'create', '--email', 'y@example.com'], env, 'short\n');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 12 characters');
    expect(
      (await new DashboardClient(base).signIn('Second@Example.com', 'another long passphrase'))
        .status,
    ).toBe(303);
  });
});
