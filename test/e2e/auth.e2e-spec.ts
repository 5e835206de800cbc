import { createHash } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { generateToken } from '../../src/auth/token-format';
import { runCli } from '../utils/cli';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

describe.each(DB_KINDS)('access tokens on %s', (kind) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(kind);
    await t.load([{ type: 'space', id: 1, name: 'One' }]);
  });
  afterAll(() => t?.close());

  it('answers the root __typename with a valid token', async () => {
    const response = await t.gql('{ __typename }');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { __typename: 'Query' } });
  });

  it.each([
    ['no header', null, 'TOKEN_REQUIRED', 'Access token is required'],
    ['an empty header', '', 'TOKEN_REQUIRED', 'Access token is required'],
    ['a malformed token', 'hello', 'INVALID_TOKEN', 'Invalid access token'],
    ['a well-formed unknown token', generateToken(), 'INVALID_TOKEN', 'Invalid access token'],
  ])(
    'refuses %s with 401 and the envelope, even for __typename',
    async (_name, token, code, message) => {
      for (const query of ['{ __typename }', '{ space(id: 1) { name } }']) {
        const response = await t.gql(query, undefined, { token });
        expect(response.status).toBe(401);
        expect(response.body.data).toBeUndefined();
        expect(response.body.errors).toEqual([
          {
            message,
            extensions: {
              code,
              category: 'AUTHENTICATION',
              http_status: 401,
              request_id: response.headers.get('x-request-id'),
              timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
            },
          },
        ]);
      }
    },
  );

  it('checks the token whatever spelling of the path reaches /query', async () => {
    for (const path of ['/%71uery', '/query?x=1', '/query/']) {
      const response = await fetch(t.url.replace('/query', path), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      const body = await response.text();
      expect(body).not.toContain('"__typename":"Query"');
      expect([401, 404]).toContain(response.status);
    }
  });

  it('refuses a token with one character changed without reading the database', async () => {
    const tampered = t.token.slice(0, 10) + (t.token[10] === 'a' ? 'b' : 'a') + t.token.slice(11);
    t.recorder.queries.length = 0;
    const response = await t.gql('{ __typename }', undefined, { token: tampered });
    expect(response.status).toBe(401);
    expect(response.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
    expect(t.recorder.queries.filter((q) => /access_tokens/.test(q))).toEqual([]);
  });

  it('stops accepting a revoked token at once', async () => {
    const tokens = t.app.get(AccessTokensService);
    const created = await tokens.create('short-lived');
    expect((await t.gql('{ __typename }', undefined, { token: created.token })).status).toBe(200);
    expect(await tokens.revoke(created.id)).toBe(true);
    const response = await t.gql('{ __typename }', undefined, { token: created.token });
    expect(response.status).toBe(401);
    expect(response.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
  });

  it('stores a one-way hash and a display prefix, never the token', async () => {
    const created = await t.app.get(AccessTokensService).create('stored');
    const rows: Array<Record<string, unknown>> = await t.app
      .get<DataSource>(getDataSourceToken())
      .query('SELECT * FROM access_tokens WHERE id = ?', [created.id]);
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(created.token);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(created.token).digest('hex'));
    expect(rows[0].prefix).toBe(created.token.slice(0, 12));
    const listed = JSON.stringify(await t.app.get(AccessTokensService).list());
    expect(listed).not.toContain(created.token);
    expect(listed).not.toContain(rows[0].token_hash as string);
  });

  it('creates a token from the command line, printing the token alone on stdout', async () => {
    const result = await runCli(['token', 'create', '--name', 'ci'], { DATABASE_URL: t.db.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^lpt_[0-9A-Za-z]{49}\n$/);
    expect(result.stderr).toContain('shown only this once');
    const response = await t.gql('{ __typename }', undefined, { token: result.stdout.trim() });
    expect(response.body).toEqual({ data: { __typename: 'Query' } });
  });
});
