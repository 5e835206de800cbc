import { getDataSourceToken } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const DAY = 86_400_000;
const SPACE_A = 3;
const SPACE_B = 7;

/** The envelope of a refused token on any route, as a user compares two answers. */
const withoutIds = (body: unknown) =>
  JSON.parse(JSON.stringify(body), (key, value) =>
    key === 'request_id' || key === 'timestamp' ? '-' : value,
  );

describe.each(DB_KINDS)('space and deployment tokens on %s', (kind) => {
  let t: TestApp;
  let tokens: AccessTokensService;
  let dataSource: DataSource;
  let ingestUrl: string;

  async function ingest(body: string, token: string, contentType = 'application/json') {
    const response = await fetch(ingestUrl, {
      method: 'POST',
      headers: { 'content-type': contentType, 'access-token': token },
      body,
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const spaceName = async (id: number, token = t.token) =>
    (await t.gql(`{ space(id: ${id}) { name } }`, undefined, { token })).body.data?.space?.name;

  beforeAll(async () => {
    t = await startTestApp(kind);
    tokens = t.app.get(AccessTokensService);
    dataSource = t.app.get<DataSource>(getDataSourceToken());
    ingestUrl = t.url.replace(/\/query$/, '/ingest');
    await t.load([
      { type: 'space', id: SPACE_A, name: 'Team A' },
      { type: 'space', id: SPACE_B, name: 'Team B' },
    ]);
  });
  afterAll(() => t?.close());

  describe('the tokens service', () => {
    it('creates a space token with an expiry, and lists, finds and filters live tokens', async () => {
      const expiresAt = Date.now() + 30 * DAY;
      const created = await tokens.create('  team A ci  ', ['ingest', 'query'], {
        spaceId: SPACE_A,
        expiresAt,
      });
      expect(created).toMatchObject({
        name: 'team A ci',
        scopes: ['ingest', 'query'],
        spaceId: SPACE_A,
        expiresAt: new Date(expiresAt).toISOString(),
        lastUsedAt: null,
        lastUsedFrom: null,
      });
      const deployment = await tokens.create('deployment');
      expect(deployment).toMatchObject({ spaceId: null, expiresAt: null });
      const other = await tokens.create('team B', ['query'], { spaceId: SPACE_B });
      const { token: _value, ...info } = created;
      expect(await tokens.find(created.id)).toEqual(info);

      const ids = async (filter?: Parameters<AccessTokensService['list']>[0]) =>
        (await tokens.list(filter)).map((token) => token.id);
      expect(await ids({ spaceIds: [SPACE_A] })).toEqual([created.id]);
      expect(await ids({ spaceIds: [SPACE_A, SPACE_B] })).toEqual([created.id, other.id]);
      expect(await ids({ spaceIds: [SPACE_B], deployment: true })).toEqual(
        expect.arrayContaining([other.id, deployment.id]),
      );
      expect(await ids({ spaceIds: [SPACE_B], deployment: true })).not.toContain(created.id);
      expect(await ids({ spaceIds: [] })).toEqual([]);
      expect(await ids()).toEqual(expect.arrayContaining([created.id, deployment.id, other.id]));

      // Revoked and expired tokens are listed and found no more.
      await tokens.revoke(other.id);
      await dataSource.query('UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        deployment.id,
      ]);
      expect(await tokens.find(other.id)).toBeNull();
      expect(await tokens.find(deployment.id)).toBeNull();
      expect(await ids()).not.toEqual(expect.arrayContaining([other.id]));
      expect(await ids()).not.toContain(deployment.id);
      expect(await ids({ spaceIds: [SPACE_A, SPACE_B], deployment: true })).toContain(created.id);
    });

    it.each([
      ['a NUL in the name', 'ci\u0000bot', {}, 'Token name must not contain control characters'],
      ['a lone surrogate in the name', 'ci \ud800', {}, 'Token name must be valid Unicode text'],
      ['an empty name', '   ', {}, 'Token name must be 1 to 100 characters'],
      ['a space id of 0', 'ci', { spaceId: 0 }, "A token's space must be a space id"],
      ['a fractional space id', 'ci', { spaceId: 1.5 }, "A token's space must be a space id"],
      ['an expiry in the past', 'ci', { expiresAt: Date.now() - 1 }, 'in the future'],
      ['an expiry 6 years ahead', 'ci', { expiresAt: Date.now() + 6 * 366 * DAY }, '5 years'],
    ])('refuses %s, creating nothing', async (_case, name, options, message) => {
      const before = (await tokens.list()).length;
      await expect(tokens.create(name, ['query'], options)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(message),
      });
      expect(await tokens.list()).toHaveLength(before);
    });

    it('records the client address of the last use, with its time', async () => {
      const created = await tokens.create('watched', ['ingest', 'query']);
      const before = Date.now();
      expect((await t.gql('{ __typename }', undefined, { token: created.token })).status).toBe(200);
      await tokens.flushLastUsed();
      const seen = await tokens.find(created.id);
      expect(seen?.lastUsedFrom).toBe('127.0.0.1');
      expect(Date.parse(seen!.lastUsedAt!)).toBeGreaterThanOrEqual(before);
      const [row] = await dataSource.query(
        'SELECT last_used_from AS lastUsedFrom FROM access_tokens WHERE id = ?',
        [created.id],
      );
      expect(row.lastUsedFrom).toBe('127.0.0.1');
      // POST /ingest counts as a use too.
      await dataSource.query('UPDATE access_tokens SET last_used_from = NULL WHERE id = ?', [
        created.id,
      ]);
      expect((await ingest('[]', created.token)).status).toBe(200);
      await tokens.flushLastUsed();
      expect((await tokens.find(created.id))?.lastUsedFrom).toBe('127.0.0.1');
    });
  });

  describe('expiry', () => {
    it('refuses an expired token on /query and /ingest exactly as a revoked one', async () => {
      const expiring = await tokens.create('expiring', ['ingest', 'query']);
      const revoked = await tokens.create('revoked', ['ingest', 'query']);
      expect(await spaceName(SPACE_A, expiring.token)).toBe('Team A');
      expect((await ingest('[]', expiring.token)).status).toBe(200);
      await dataSource.query('UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        expiring.id,
      ]);
      await tokens.revoke(revoked.id);
      await sleep(1_100); // past the verified cache of the uses above
      const query = '{ space(id: 3) { name } }';
      const expiredQuery = await t.gql(query, undefined, { token: expiring.token });
      const revokedQuery = await t.gql(query, undefined, { token: revoked.token });
      expect(expiredQuery.status).toBe(401);
      expect(expiredQuery.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      expect(withoutIds(expiredQuery.body)).toEqual(withoutIds(revokedQuery.body));
      const body = JSON.stringify([{ type: 'space', id: SPACE_A, name: 'Expired wrote' }]);
      const expiredIngest = await ingest(body, expiring.token);
      const revokedIngest = await ingest(body, revoked.token);
      expect(expiredIngest.status).toBe(401);
      expect(expiredIngest.body.errors[0]).toMatchObject({
        message: 'Invalid access token',
        extensions: { code: 'INVALID_TOKEN', http_status: 401 },
      });
      expect(withoutIds(expiredIngest.body)).toEqual(withoutIds(revokedIngest.body));
      expect(await spaceName(SPACE_A)).toBe('Team A');
    });

    it('stops a token at its expiry even while its verification is cached', async () => {
      const created = await tokens.create('short', ['query'], { expiresAt: Date.now() + 400 });
      expect((await t.gql('{ __typename }', undefined, { token: created.token })).status).toBe(200);
      await sleep(450);
      // The cache of the use above (1 s) has not run out; the token has.
      const response = await t.gql('{ __typename }', undefined, { token: created.token });
      expect(response.status).toBe(401);
      expect(response.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
    });
  });

  describe('rotation', () => {
    it('gives a new secret with the same name, scopes, space and lifetime; the old works for the grace', async () => {
      const lifetime = 30 * DAY;
      const old = await tokens.create('rotating', ['ingest', 'query'], {
        spaceId: SPACE_A,
        expiresAt: Date.now() + lifetime,
      });
      const oldCreatedAt = Date.parse(old.createdAt);
      await sleep(20);
      const before = Date.now();
      const rotated = await tokens.rotate(old.id, 60_000);
      const after = Date.now();
      expect(rotated).not.toBeNull();
      const { token: next, previous } = rotated!;
      expect(next.id).not.toBe(old.id);
      expect(next.token).not.toBe(old.token);
      expect(next).toMatchObject({
        name: 'rotating',
        scopes: ['ingest', 'query'],
        spaceId: SPACE_A,
      });
      const nextExpiry = Date.parse(next.expiresAt!);
      expect(nextExpiry - Date.parse(next.createdAt)).toBe(lifetime);
      expect(Date.parse(next.createdAt)).toBeGreaterThan(oldCreatedAt);
      expect(previous.id).toBe(old.id);
      expect(Date.parse(previous.expiresAt!)).toBeGreaterThanOrEqual(before + 60_000);
      expect(Date.parse(previous.expiresAt!)).toBeLessThanOrEqual(after + 60_000);
      // Both work during the grace, on /query and /ingest.
      expect(await spaceName(SPACE_A, old.token)).toBe('Team A');
      expect(await spaceName(SPACE_A, next.token)).toBe('Team A');
      expect((await ingest('[]', old.token)).status).toBe(200);
      expect((await ingest('[]', next.token)).status).toBe(200);
      expect(await tokens.find(next.id)).toMatchObject({ spaceId: SPACE_A });
      // A token already rotated is not rotated again: its successor is.
      expect(await tokens.rotate(old.id, 0)).toBeNull();
      expect(await tokens.rotate(next.id, 0)).not.toBeNull();
    });

    it('refuses the old token once the grace is over, and at once with a grace of 0', async () => {
      const graceful = await tokens.create('graceful');
      const abrupt = await tokens.create('abrupt');
      // Both verified and cached by this instance first.
      expect((await t.gql('{ __typename }', undefined, { token: graceful.token })).status).toBe(
        200,
      );
      expect((await t.gql('{ __typename }', undefined, { token: abrupt.token })).status).toBe(200);
      const soft = await tokens.rotate(graceful.id, 600);
      const hard = await tokens.rotate(abrupt.id, 0);
      expect(hard?.previous.expiresAt).not.toBeNull();
      expect((await t.gql('{ __typename }', undefined, { token: abrupt.token })).status).toBe(401);
      expect((await t.gql('{ __typename }', undefined, { token: hard!.token.token })).status).toBe(
        200,
      );
      expect((await t.gql('{ __typename }', undefined, { token: graceful.token })).status).toBe(
        200,
      );
      await sleep(700);
      const late = await t.gql('{ __typename }', undefined, { token: graceful.token });
      expect(late.status).toBe(401);
      expect(late.body.errors[0].extensions.code).toBe('INVALID_TOKEN');
      expect((await t.gql('{ __typename }', undefined, { token: soft!.token.token })).status).toBe(
        200,
      );
      expect(await tokens.find(graceful.id)).toBeNull();
      expect(await tokens.find(abrupt.id)).toBeNull();
    });

    it('keeps a token that never expires never expiring, and ends the old one on another instance within the cache TTL', async () => {
      const second = await startTestApp(kind, {}, t.db);
      try {
        const forever = await tokens.create('forever');
        expect(
          (await second.gql('{ __typename }', undefined, { token: forever.token })).status,
        ).toBe(200);
        const rotated = await tokens.rotate(forever.id, 0);
        expect(rotated?.token.expiresAt).toBeNull();
        await sleep(1_050);
        expect(
          (await second.gql('{ __typename }', undefined, { token: forever.token })).status,
        ).toBe(401);
        expect(
          (await second.gql('{ __typename }', undefined, { token: rotated!.token.token })).status,
        ).toBe(200);
      } finally {
        await second.close();
      }
    });

    it('answers null for an unknown, revoked or expired token, and refuses a bad grace', async () => {
      const revoked = await tokens.create('revoked before rotation');
      await tokens.revoke(revoked.id);
      expect(await tokens.rotate(revoked.id, 1000)).toBeNull();
      expect(await tokens.rotate('00000000-0000-0000-0000-000000000000', 1000)).toBeNull();
      const expired = await tokens.create('expired before rotation');
      await dataSource.query('UPDATE access_tokens SET expires_at = ? WHERE id = ?', [
        Date.now() - 1,
        expired.id,
      ]);
      expect(await tokens.rotate(expired.id, 1000)).toBeNull();
      const live = await tokens.create('live');
      const count = (await tokens.list()).length;
      for (const grace of [-1, 1.5, 30 * DAY + 1])
        await expect(tokens.rotate(live.id, grace)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      expect(await tokens.list()).toHaveLength(count);
      expect(await tokens.find(live.id)).toMatchObject({ expiresAt: null });
    });
  });
});
