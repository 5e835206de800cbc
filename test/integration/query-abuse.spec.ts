import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const page = (alias: string, first: number | string) =>
  `${alias}: space(id: 1) { loyaltyPointsRanks(first: ${first}) { list { rank points address { username } } } }`;

describe.each(DB_KINDS)('abusive requests on %s', (kind) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(kind, {
      NODE_ENV: 'development',
      MAX_QUERY_DEPTH: '5',
      MAX_QUERY_ALIASES: '25',
      MAX_QUERY_COST: '20000',
      MAX_QUERY_TOKENS: '3000',
      MAX_BODY_BYTES: '20000',
    });
    await t.load([
      { type: 'space', id: 1, name: 'Target' },
      {
        type: 'points',
        key: 'p1',
        spaceId: 1,
        address: '0xA',
        points: 5,
        occurredAt: '2026-01-01T00:00:00Z',
      },
    ]);
  });
  afterAll(() => t?.close());

  /** Sends a raw body; answers status, parsed body, and the SQL the service ran meanwhile. */
  async function send(body: string, contentType = 'application/json') {
    t.recorder.queries.length = 0;
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': contentType, 'access-token': t.token },
      body,
    });
    const text = await response.text();
    return {
      status: response.status,
      text,
      body: JSON.parse(text),
      queries: [...t.recorder.queries],
    };
  }
  const query = (q: string, variables?: Record<string, unknown>) =>
    send(JSON.stringify({ query: q, variables }));

  function expectRefused(result: Awaited<ReturnType<typeof send>>, code: string, message: RegExp) {
    expect(result.status).toBe(400);
    expect(result.body.data).toBeUndefined();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors[0].message).toMatch(message);
    expect(result.body.errors[0].extensions).toMatchObject({
      code,
      category: 'VALIDATION',
      http_status: 400,
    });
    expect(result.body.errors[0].extensions.request_id).toEqual(expect.any(String));
    // Nothing ran: not even the board's tables were read.
    expect(result.queries.filter((q) => !/access_tokens/.test(q))).toEqual([]);
  }

  it('refuses too deep, too many aliases and too costly, counting fragments, page sizes and variables', async () => {
    expect(
      (await query('{ space(id: 1) { loyaltyPointsRanks { list { address { id } } } } }')).status,
    ).toBe(200);
    expectRefused(
      await query('{ space(id: 1) { loyaltyPointsRanks { edges { node { address { id } } } } } }'),
      'QUERY_TOO_DEEP',
      /too deep: depth 6, at most 5/,
    );
    expectRefused(
      await query(`{ space(id: 1) { loyaltyPointsRanks { edges { node { ...N } } } } }
        fragment N on LoyaltyPointsRank { address { id } }`),
      'QUERY_TOO_DEEP',
      /depth 6/,
    );
    const aliases = `{ ${Array.from({ length: 26 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
    expect((await query(aliases.replace('a25: __typename', ''))).status).toBe(200);
    expectRefused(
      await query(aliases),
      'TOO_MANY_ALIASES',
      /too many aliases: 26 aliases, at most 25/,
    );
    expect((await query(`{ ${page('a', 1000)} ${page('b', 1000)} }`)).status).toBe(200);
    expectRefused(
      await query(`{ ${[1, 2, 3, 4, 5].map((i) => page(`p${i}`, 1000)).join(' ')} }`),
      'QUERY_TOO_COSTLY',
      /cost \d+, at most 20000/,
    );
    // Measured once per query text when no variable sizes a page: still refused every time.
    const costly = `{ ${[1, 2, 3, 4, 5].map((i) => page(`p${i}`, 1000)).join(' ')} }`;
    expectRefused(await query(costly), 'QUERY_TOO_COSTLY', /cost \d+, at most 20000/);
    // Measured per request when a variable does: the same text passes or not by its variables.
    const byVariable = `query($n: Int) { ${[1, 2, 3, 4, 5].map((i) => page(`p${i}`, '$n')).join(' ')} }`;
    expect((await query(byVariable, { n: 10 })).status).toBe(200);
    expectRefused(await query(byVariable, { n: 1000 }), 'QUERY_TOO_COSTLY', /too costly/);
    expect((await query(byVariable, { n: 10 })).status).toBe(200);
  });

  it('counts page sizes through inline and named fragments and variable defaults, and introspection aliases', async () => {
    const five = [1, 2, 3, 4, 5];
    const inline = `{ ${five.map((i) => `p${i}: space(id: 1) { loyaltyPointsRanks(first: 1000) { ... on LoyaltyPointsRanks { list { rank points address { username } } } } }`).join(' ')} }`;
    expectRefused(await query(inline), 'QUERY_TOO_COSTLY', /too costly/);
    const named = `{ ${five.map((i) => `p${i}: space(id: 1) { loyaltyPointsRanks(first: 1000) { ...Page } }`).join(' ')} }
      fragment Page on LoyaltyPointsRanks { list { rank points address { username } } }`;
    expectRefused(await query(named), 'QUERY_TOO_COSTLY', /too costly/);
    const byDefault = `query($n: Int = 1000) { ${five.map((i) => page(`p${i}`, '$n')).join(' ')} }`;
    expectRefused(await query(byDefault), 'QUERY_TOO_COSTLY', /too costly/);
    const introspection = `{ __schema { ${Array.from({ length: 26 }, (_, i) => `t${i}: types { name }`).join(' ')} } }`;
    expectRefused(await query(introspection), 'TOO_MANY_ALIASES', /26 aliases/);
  });

  it('refuses mutations and subscriptions, which the service does not have', async () => {
    expectRefused(
      await query('mutation { x }'),
      'OPERATION_NOT_SUPPORTED',
      /queries only, not a mutation/,
    );
    expectRefused(
      await query('subscription { x }'),
      'OPERATION_NOT_SUPPORTED',
      /not a subscription/,
    );
  });

  it('gates GET queries even when they accept HTML', async () => {
    const get = (headers: Record<string, string>) =>
      fetch(`${t.url}?query=${encodeURIComponent('{ space(id: 1) { name } }')}`, {
        headers: { 'apollo-require-preflight': '1', ...headers },
      });
    const anonymous = await get({ accept: 'application/json, text/html;q=0.1' });
    expect(anonymous.status).toBe(401);
    const allowed = await get({
      accept: 'application/json, text/html;q=0.1',
      'access-token': t.token,
    });
    expect(allowed.status).toBe(200);
    const unknown = await get({
      accept: 'application/json, text/html;q=0.1',
      'access-token': 'lpt_unknown',
    });
    expect(unknown.status).toBe(401);
  });

  it('answers a broken body on any spelling of the path in the envelope', async () => {
    const response = await fetch(t.url.replace('/query', '/%71uery'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': t.token },
      body: '{"query": ',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('MALFORMED_REQUEST');
  });

  it('refuses a document with too many tokens, batches, and bodies that are too large or broken', async () => {
    expectRefused(
      await query(`{ ${'a '.repeat(3100)}}`),
      'GRAPHQL_PARSE_FAILED',
      /more tha[nt] 3000 tokens/,
    );
    expectRefused(
      await send(JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }])),
      'BAD_REQUEST',
      /batching/i,
    );
    expectRefused(
      await send(JSON.stringify({ query: `{ __typename } # ${'x'.repeat(30000)}` })),
      'REQUEST_TOO_LARGE',
      /at most 20000 bytes/,
    );
    expectRefused(await send('{"query": "{ __typename }"'), 'MALFORMED_REQUEST', /not valid JSON/);
    expectRefused(await send('{}'), 'BAD_REQUEST', /./);
    expectRefused(await send(JSON.stringify({ query: 42 })), 'BAD_REQUEST', /./);
  });

  it('refuses cross-site requests (CSRF prevention)', async () => {
    expectRefused(
      await send(JSON.stringify({ query: '{ __typename }' }), 'text/plain'),
      'BAD_REQUEST',
      /Cross-Site Request Forgery/,
    );
    const get = await fetch(`${t.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { 'access-token': t.token },
    });
    expect(get.status).toBe(400);
    expect(((await get.json()) as any).errors[0].extensions).toMatchObject({
      code: 'BAD_REQUEST',
      request_id: expect.any(String),
    });
  });

  it('shows no stack trace, SQL or suggestion, even in development and when the database fails', async () => {
    const suggestion = await query('{ space(id: 1) { nme } }');
    expect(suggestion.status).toBe(400);
    expect(suggestion.text).not.toMatch(/Did you mean|stacktrace/i);
    const db = t.app.get<DataSource>(getDataSourceToken());
    await db.query('ALTER TABLE profiles RENAME TO profiles_away');
    try {
      // Past the 500 ms for which profiles read for pages are reused: the page reads the table.
      await new Promise((resolve) => setTimeout(resolve, 600));
      const failed = await query(
        '{ space(id: 1) { loyaltyPointsRanks { list { rank address { username } } } } }',
      );
      expect(failed.status).toBe(200);
      expect(failed.body.errors[0]).toMatchObject({
        message: 'Internal server error',
        extensions: { code: 'INTERNAL_SERVER_ERROR', category: 'INTERNAL', http_status: 500 },
      });
      expect(failed.text).not.toMatch(
        /profiles|SELECT|sqlite|\bER_[A-Z]|\.ts:|\.js:|at [A-Za-z]+ \(/,
      );
    } finally {
      await db.query('ALTER TABLE profiles_away RENAME TO profiles');
    }
  });
});

describe('the in-browser IDE', () => {
  it.each([
    ['development', 200, 'text/html'],
    ['production', 401, 'application/json'],
  ])('on GET /query for a browser in %s answers %i', async (nodeEnv, status, type) => {
    const t = await startTestApp('sqlite', { NODE_ENV: nodeEnv });
    try {
      const response = await fetch(t.url, { headers: { accept: 'text/html' } });
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toContain(type);
    } finally {
      await t.close();
    }
  });
});
