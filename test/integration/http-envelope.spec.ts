import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const EMAIL = 'admin@example.com';
const PASSWORD = 'correct horse battery staple';
const TOKENS = '/settings/server-api/tokens';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const CATEGORY: Record<string, string> = {
  MALFORMED_REQUEST: 'VALIDATION',
  REQUEST_TOO_LARGE: 'VALIDATION',
  METHOD_NOT_ALLOWED: 'VALIDATION',
  NOT_FOUND: 'NOT_FOUND',
};

/** The whole answer is the error envelope of docs/api.md, and nothing of Nest's own body. */
function expectEnvelope(answer: Answer, status: number, code: string, message: RegExp): void {
  expect({ status: answer.status, code }).toEqual({ status, code });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(answer.text);
  expect(body).toEqual({
    errors: [
      {
        message: expect.stringMatching(message),
        extensions: {
          code,
          category: CATEGORY[code],
          http_status: status,
          request_id: answer.headers.get('x-request-id'),
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      },
    ],
  });
  expect(answer.headers.get('x-request-id')).toEqual(expect.any(String));
}

describe.each(DB_KINDS)('JSON error answers of the host on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let admin: DashboardClient;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    await t.app.get(AdminsService).create(EMAIL, PASSWORD);
    admin = new DashboardClient(base);
    expect((await admin.signIn(EMAIL, PASSWORD)).status).toBe(303);
    csrf = await admin.csrfToken();
  });
  afterAll(() => t?.close());

  /** A signed-in admin's JSON call to the settings endpoint, with a raw body. */
  const settings = (body: string, contentType = 'application/json', method = 'POST') =>
    admin.request(TOKENS, {
      method,
      headers: { 'x-csrf-token': csrf, 'content-type': contentType },
      body,
    });
  const tokenNames = async () =>
    (JSON.parse((await admin.request(TOKENS)).text) as Array<{ name: string }>)
      .map((token) => token.name)
      .sort();

  it('refuses malformed JSON, __proto__ and constructor.prototype bodies on the settings endpoint with 400 MALFORMED_REQUEST, creating nothing', async () => {
    const before = await tokenNames();
    for (const body of [
      '{"name":',
      '',
      '{"__proto__": {"isAdmin": true}, "name": "polluted"}',
      '{"constructor": {"prototype": {"isAdmin": true}}, "name": "polluted"}',
    ]) {
      expectEnvelope(
        await settings(body),
        400,
        'MALFORMED_REQUEST',
        /^Request body is not valid JSON$/,
      );
    }
    expect(await tokenNames()).toEqual(before);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    // The same body on /query gets the same answer.
    const query = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': t.token },
      body: '{"__proto__": {"isAdmin": true}, "query": "{ __typename }"}',
    });
    expectEnvelope(
      { status: query.status, headers: query.headers, text: await query.text() },
      400,
      'MALFORMED_REQUEST',
      /^Request body is not valid JSON$/,
    );
  });

  it('refuses a body over the limit with 400 REQUEST_TOO_LARGE naming it, as /query does', async () => {
    const before = await tokenNames();
    const huge = JSON.stringify({ name: 'x'.repeat(1_100_000) });
    expectEnvelope(
      await settings(huge),
      400,
      'REQUEST_TOO_LARGE',
      /^Request body is too large: at most 102400 bytes$/,
    );
    const query = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': t.token },
      body: huge,
    });
    expectEnvelope(
      { status: query.status, headers: query.headers, text: await query.text() },
      400,
      'REQUEST_TOO_LARGE',
      /^Request body is too large: at most 102400 bytes$/,
    );
    expect(await tokenNames()).toEqual(before);
  });

  it('refuses a media type the route does not read with 400 MALFORMED_REQUEST', async () => {
    for (const type of ['application/xml', 'application/x-ndjson']) {
      expectEnvelope(
        await settings('<name>x</name>', type),
        400,
        'MALFORMED_REQUEST',
        /^Content-Type is not supported here$/,
      );
    }
  });

  it('answers unknown routes with 404 NOT_FOUND', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/settings/nope'],
      ['GET', '/settings/server-api/tokens/x/y'],
      ['GET', '/health/nope'],
      ['GET', '/query/'],
    ]) {
      const answer = await admin.request(path, {
        method,
        headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
      expectEnvelope(answer, 404, 'NOT_FOUND', new RegExp(`^No route answers ${method} `));
    }
    // A body refused on the way is answered as on any route: every path keeps the body limit.
    expectEnvelope(
      await admin.request('/settings/nope', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x'.repeat(200_000) }),
      }),
      400,
      'REQUEST_TOO_LARGE',
      /^Request body is too large: at most 102400 bytes$/,
    );
    expectEnvelope(
      await admin.request('/settings/nope', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":',
      }),
      400,
      'MALFORMED_REQUEST',
      /^Request body is not valid JSON$/,
    );
  });

  it('answers a method the path does not have with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    for (const [method, path, allow] of [
      ['PUT', TOKENS, 'GET, HEAD, POST'],
      ['DELETE', TOKENS, 'GET, HEAD, POST'],
      ['PATCH', `${TOKENS}/some-id`, 'DELETE'],
      ['PUT', '/query', 'GET, HEAD, POST'],
      ['GET', '/ingest', 'POST'],
      ['POST', '/health/ready', 'GET, HEAD'],
    ]) {
      const answer = await admin.request(path, {
        method,
        headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : '{}',
      });
      expectEnvelope(
        answer,
        405,
        'METHOD_NOT_ALLOWED',
        new RegExp(`^Method ${method} is not allowed here: use ${allow}$`),
      );
      expect(answer.headers.get('allow')).toBe(allow);
    }
  });

  it('refuses OPTIONS when no CORS origin is configured: 405 on a route, 404 elsewhere', async () => {
    for (const path of ['/query', TOKENS, '/ingest']) {
      const answer = await admin.request(path, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expectEnvelope(answer, 405, 'METHOD_NOT_ALLOWED', /^Method OPTIONS is not allowed here/);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
    expectEnvelope(
      await admin.request('/nope', { method: 'OPTIONS' }),
      404,
      'NOT_FOUND',
      /^No route answers OPTIONS \/nope$/,
    );
  });

  it('refuses a URL that cannot be decoded with 400 MALFORMED_REQUEST', async () => {
    expectEnvelope(
      await admin.request('/%E0%A4%A'),
      400,
      'MALFORMED_REQUEST',
      /^Request URL is not valid$/,
    );
  });

  it('keeps the dashboard pages HTML and /ingest its own answers', async () => {
    const page = await admin.request('/dashboard/settings');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const anonymous = await new DashboardClient(base).request('/dashboard/settings');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/dashboard/sign-in');
    const { token } = await t.app.get(AccessTokensService).create('feed', ['ingest']);
    const ingest = await fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'access-token': token },
      body: 'a,b',
    });
    expectEnvelope(
      { status: ingest.status, headers: ingest.headers, text: await ingest.text() },
      400,
      'MALFORMED_REQUEST',
      /^Content-Type must be application\/json \(an array of records\) or application\/x-ndjson$/,
    );
  });
});

describe('OPTIONS with CORS configured', () => {
  it('still answers an allowed origin’s preflight on /query', async () => {
    const t = await startTestApp('sqlite', { CORS_ORIGINS: 'https://app.example.com' });
    try {
      const preflight = await fetch(t.url, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, access-token',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    } finally {
      await t.close();
    }
  });
});
