import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { generateToken } from '../../src/auth/token-format';
import { runCli } from '../utils/cli';
import { DB_KINDS } from '../utils/test-databases';
import { GqlResponse, startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

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
    const rows: Array<Record<string, unknown>> = await runSql(
      t.app.get<DataSource>(getDataSourceToken()),
      'SELECT * FROM access_tokens WHERE id = ?',
      [created.id],
    );
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(created.token);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(created.token).digest('hex'));
    expect(rows[0].prefix).toBe(created.token.slice(0, 12));
    const listed = JSON.stringify(await t.app.get(AccessTokensService).list());
    expect(listed).not.toContain(created.token);
    expect(listed).not.toContain(rows[0].token_hash as string);
  });

  describe('scopes', () => {
    const rowOf = async (id: string) =>
      (
        await runSql(
          t.app.get<DataSource>(getDataSourceToken()),
          'SELECT scopes FROM access_tokens WHERE id = ?',
          [id],
        )
      )[0] as { scopes: string } | undefined;

    const expectInsufficientScope = (response: GqlResponse) => {
      expect(response.status).toBe(403);
      expect(response.body.data).toBeUndefined();
      expect(response.body.errors).toEqual([
        {
          message: "Access token lacks the 'query' scope",
          extensions: {
            code: 'INSUFFICIENT_SCOPE',
            category: 'AUTHENTICATION',
            http_status: 403,
            request_id: response.headers.get('x-request-id'),
            timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          },
        },
      ]);
    };

    it('gives a token created without scopes ["query"], and it works on /query', async () => {
      const tokens = t.app.get(AccessTokensService);
      const created = await tokens.create('default-scopes');
      expect(created.scopes).toEqual(['query']);
      expect((await rowOf(created.id))?.scopes).toBe('query');
      expect((await tokens.list()).find((token) => token.id === created.id)?.scopes).toEqual([
        'query',
      ]);
      const response = await t.gql('{ space(id: 1) { name } }', undefined, {
        token: created.token,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { space: { name: 'One' } } });
    });

    it('refuses an ingest-only token on /query with 403 INSUFFICIENT_SCOPE, even for __typename', async () => {
      const created = await t.app.get(AccessTokensService).create('ingest-only', ['ingest']);
      expect(created.scopes).toEqual(['ingest']);
      expect((await rowOf(created.id))?.scopes).toBe('ingest');
      for (const query of ['{ __typename }', '{ space(id: 1) { name } }'])
        expectInsufficientScope(await t.gql(query, undefined, { token: created.token }));
      // The refusal comes from the verified-token cache: the scopes are cached with the token.
      t.recorder.queries.length = 0;
      expectInsufficientScope(await t.gql('{ __typename }', undefined, { token: created.token }));
      expect(t.recorder.queries.filter((q) => /FROM .access_tokens/.test(q))).toEqual([]);
    });

    it('accepts a token with both scopes on /query, checking it once per request', async () => {
      const created = await t.app
        .get(AccessTokensService)
        .create('both', ['query', 'ingest', 'query']);
      expect(created.scopes).toEqual(['ingest', 'query']);
      expect((await rowOf(created.id))?.scopes).toBe('ingest,query');
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the 1 s verified cache
      t.recorder.queries.length = 0;
      const response = await t.gql(
        '{ __typename a: space(id: 1) { name } b: space(id: 1) { name } }',
        undefined,
        { token: created.token },
      );
      expect(response.body).toEqual({
        data: { __typename: 'Query', a: { name: 'One' }, b: { name: 'One' } },
      });
      expect(t.recorder.queries.filter((q) => /FROM .access_tokens/.test(q))).toHaveLength(1);
    });

    it('refuses an empty or unknown scope list when creating, creating nothing', async () => {
      const tokens = t.app.get(AccessTokensService);
      const before = (await tokens.list()).length;
      await expect(tokens.create('x', [])).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: 'A token needs at least one scope (query, ingest)',
      });
      await expect(tokens.create('x', ['admin' as never])).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: 'Unknown token scope "admin": the scopes are query, ingest',
      });
      expect(await tokens.list()).toHaveLength(before);
    });

    it('spends an ingest-only token its own budget on /query, never its address', async () => {
      const limited = await startTestApp(
        kind,
        { RATE_LIMIT_TOKEN: '3/30s', RATE_LIMIT_ADDRESS: '2/30s' },
        t.db,
      );
      try {
        const { token } = await limited.app.get(AccessTokensService).create('ingest', ['ingest']);
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++)
          statuses.push((await limited.gql('{ __typename }', undefined, { token })).status);
        expect(statuses).toEqual([403, 403, 403, 429]);
        // The address budget is untouched: a request without a token is still only refused.
        expect((await limited.gql('{ __typename }', undefined, { token: null })).status).toBe(401);
        expect((await limited.gql('{ __typename }')).status).toBe(200);
      } finally {
        await limited.app.close();
      }
    });
  });

  it('creates a token from the command line, printing the token alone on stdout', async () => {
    const result = await runCli(['token', 'create', '--name', 'ci'], { DATABASE_URL: t.db.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^lpt_[0-9A-Za-z]{49}\n$/);
    expect(result.stderr).toContain('shown only this once');
    const response = await t.gql('{ __typename }', undefined, { token: result.stdout.trim() });
    expect(response.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('creates a token in the database --database-url names, over DATABASE_URL', async () => {
    const result = await runCli(
      ['token', 'create', '--database-url', t.db.url, '--name', 'by-flag'],
      { DATABASE_URL: 'sqlite:/nonexistent/elsewhere.sqlite' },
    );
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^lpt_\w+\n$/) });
    expect(result.stderr).not.toContain('No DATABASE_URL');
    const response = await t.gql('{ __typename }', undefined, { token: result.stdout.trim() });
    expect(response.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('creates a token with scopes from the command line, refusing an unknown scope with exit 2', async () => {
    const env = { DATABASE_URL: t.db.url };
    const scopesOf = async (name: string) =>
      (
        await runSql<{ scopes: string }>(
          t.app.get<DataSource>(getDataSourceToken()),
          'SELECT scopes FROM access_tokens WHERE name = ?',
          [name],
        )
      ).map((row) => row.scopes);

    const both = await runCli(
      ['token', 'create', '--name', 'cli-both', '--scope', 'query,ingest'],
      env,
    );
    expect(both.code).toBe(0);
    expect(both.stdout).toMatch(/^lpt_[0-9A-Za-z]{49}\n$/);
    expect(both.stderr).toContain('with scopes ingest, query');
    expect(await scopesOf('cli-both')).toEqual(['ingest,query']);
    expect((await t.gql('{ __typename }', undefined, { token: both.stdout.trim() })).status).toBe(
      200,
    );

    const ingest = await runCli(
      ['token', 'create', '--name', 'cli-ingest', '--scope', 'ingest'],
      env,
    );
    expect(ingest.code).toBe(0);
    expect(await scopesOf('cli-ingest')).toEqual(['ingest']);
    expect((await t.gql('{ __typename }', undefined, { token: ingest.stdout.trim() })).status).toBe(
      403,
    );
    const ingestWith = (token: string) =>
      fetch(t.url.replace(/\/query$/, '/ingest'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'access-token': token },
        body: '[]',
      }).then((response) => response.status);
    expect(await ingestWith(ingest.stdout.trim())).toBe(200);
    expect(await ingestWith(both.stdout.trim())).toBe(200);

    const plain = await runCli(['token', 'create', '--name', 'cli-plain'], env);
    expect(plain.code).toBe(0);
    expect(await scopesOf('cli-plain')).toEqual(['query']);
    expect(await ingestWith(plain.stdout.trim())).toBe(403);

    for (const scope of ['query,admin', 'Query', '', 'query,']) {
      const refused = await runCli(
        ['token', 'create', '--name', 'cli-refused', '--scope', scope],
        env,
      );
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/Unknown token scope "[^"]*": the scopes are query, ingest/);
      expect(refused.stderr).toContain('token create --name NAME [--scope query,ingest]');
    }
    expect(await scopesOf('cli-refused')).toEqual([]);
  });
});

describe('the command line without a database URL', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'loyalty-cli-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('says it makes a new database, naming the database files beside it, once', async () => {
    // A host's database, under the name the host chose.
    writeFileSync(join(folder, 'loyalty.sqlite'), '');
    const create = (name: string) =>
      runCli(['token', 'create', '--name', name], { DATABASE_URL: '' }, undefined, folder);
    const first = await create('first');
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(
      `No DATABASE_URL: making a new database at ${join('data', 'loyalty.sqlite')}. A service ` +
        'or host that uses another database will not see what this command does: give its URL ' +
        'with --database-url or DATABASE_URL. Database files here: loyalty.sqlite.\n',
    );
    expect(existsSync(join(folder, 'data', 'loyalty.sqlite'))).toBe(true);
    const second = await create('second');
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain('No DATABASE_URL');
  });
});
