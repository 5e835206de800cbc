import { DataSource } from 'typeorm';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { runCli } from '../utils/cli';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const OPERATOR = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const SPACE_A = 1;
const SPACE_B = 2;

type Json = Record<string, any>;

/** A signed-in dashboard client that sends JSON with its session's CSRF token. */
class Member {
  constructor(
    readonly client: DashboardClient,
    readonly email: string,
    private csrf: string,
  ) {}

  async call(method: string, path: string, json?: unknown) {
    const response = await this.client.request(path, {
      method,
      json,
      headers: method === 'GET' ? {} : { 'x-csrf-token': this.csrf },
    });
    const body = response.text ? (JSON.parse(response.text) as Json) : null;
    return { status: response.status, body, text: response.text };
  }

  get = (path: string) => this.call('GET', path);
  post = (path: string, json?: unknown) => this.call('POST', path, json ?? {});
  delete = (path: string) => this.call('DELETE', path);
}

const errorOf = (response: { body: Json | null }) => response.body?.errors?.[0];

describe.each(DB_KINDS)('teams on one deployment, on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let operator: Member;

  const signIn = async (email: string, password = PASSWORD) => {
    const client = new DashboardClient(base);
    const answer = await client.signIn(email, password);
    expect(answer.status).toBe(303);
    return new Member(client, email, await client.csrfToken());
  };

  /** An account with `role` in `spaceId`, joined through an invitation as a user would. */
  const join = async (email: string, spaceId: number, role: SpaceRole) => {
    const invited = await operator.post(`/settings/spaces/${spaceId}/invitations`, {
      email,
      role,
    });
    expect(invited.status).toBe(201);
    const secret = new URL(invited.body!.link as string).pathname.split('/').pop()!;
    const members = t.app.get(MembersService);
    if ((await members.findOpen(secret))!.accountExists)
      await members.accept(secret, { password: PASSWORD });
    else await members.accept(secret, { name: email.split('@')[0], password: PASSWORD });
    return signIn(email);
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    await t.load([
      { type: 'space', id: SPACE_A, name: 'Alpha' },
      { type: 'space', id: SPACE_B, name: 'Beta' },
    ]);
    await t.app.get(AdminsService).create(OPERATOR, PASSWORD);
    operator = await signIn(OPERATOR);
  });
  afterAll(() => t?.close());

  describe('space tokens through the settings endpoint', () => {
    let owner: Member;
    let viewer: Member;
    let editor: Member;

    beforeAll(async () => {
      owner = await join('owner-a@example.com', SPACE_A, 'owner');
      viewer = await join('viewer-a@example.com', SPACE_A, 'viewer');
      editor = await join('editor-a@example.com', SPACE_A, 'editor');
    });

    it('lets an owner create a token of their space, and only of it', async () => {
      const created = await owner.post('/settings/server-api/tokens', {
        name: 'alpha export',
        scopes: ['query', 'ingest'],
        spaceId: SPACE_A,
        expires: '30d',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: 'alpha export', spaceId: SPACE_A });
      const lifetime = Date.parse(created.body!.expiresAt) - Date.parse(created.body!.createdAt);
      expect(Math.round(lifetime / 86_400_000)).toBe(30);

      const foreign = await owner.post('/settings/server-api/tokens', {
        name: 'beta',
        spaceId: SPACE_B,
      });
      expect(foreign.status).toBe(404);
      expect(errorOf(foreign)).toMatchObject({ message: 'Space not found' });

      const deployment = await owner.post('/settings/server-api/tokens', { name: 'everything' });
      expect(deployment.status).toBe(403);
      expect(errorOf(deployment).message).toBe(
        `Only operators make deployment tokens: choose one of your spaces (spaceId ${SPACE_A})`,
      );
    });

    it('refuses a viewer and an editor creating a token, with 403 and nothing created', async () => {
      const before = (await operator.get('/settings/server-api/tokens')).body as unknown as Json[];
      for (const member of [viewer, editor]) {
        const refused = await member.post('/settings/server-api/tokens', {
          name: 'mine',
          spaceId: SPACE_A,
        });
        expect(refused.status).toBe(403);
        expect(errorOf(refused).extensions).toMatchObject({
          code: 'PERMISSION_DENIED',
          http_status: 403,
        });
        expect((await member.get('/settings/server-api/tokens')).body).toEqual([]);
      }
      expect((await operator.get('/settings/server-api/tokens')).body).toEqual(before);
    });

    it("shows an owner only their space's tokens; another space's token is not found", async () => {
      const beta = await operator.post('/settings/server-api/tokens', {
        name: 'beta job',
        spaceId: SPACE_B,
      });
      const listed = (await owner.get('/settings/server-api/tokens')).body as unknown as Json[];
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.every((token) => token.spaceId === SPACE_A)).toBe(true);
      for (const attempt of [
        () => owner.delete(`/settings/server-api/tokens/${beta.body!.id}`),
        () => owner.post(`/settings/server-api/tokens/${beta.body!.id}/rotate`, {}),
      ]) {
        const refused = await attempt();
        expect(refused.status).toBe(404);
        expect(errorOf(refused).extensions.code).toBe('TOKEN_NOT_FOUND');
      }
      const { data } = (
        await t.gql('{ space(id: 2) { name } }', undefined, {
          token: beta.body!.token,
        })
      ).body;
      expect(data).toEqual({ space: { name: 'Beta' } });
    });

    it('lets an editor adjust points with a reason, and refuses a viewer', async () => {
      const granted = await editor.post(`/settings/spaces/${SPACE_A}/points`, {
        address: '0xA11CE',
        points: 25,
        reason: 'Community call host',
      });
      expect(granted.status).toBe(201);
      const deducted = await editor.post(`/settings/spaces/${SPACE_A}/points`, {
        address: '0xa11ce',
        points: '-5',
        reason: 'Duplicate claim',
      });
      expect(deducted.status).toBe(201);
      const refused = await viewer.post(`/settings/spaces/${SPACE_A}/points`, {
        address: '0xA11CE',
        points: 1000,
        reason: 'me',
      });
      expect(refused.status).toBe(403);
      const bad = await editor.post(`/settings/spaces/${SPACE_A}/points`, {
        address: '0xA11CE',
        points: 1.5,
        reason: 'half',
      });
      expect(bad.status).toBe(400);
      const noReason = await editor.post(`/settings/spaces/${SPACE_A}/points`, {
        address: '0xA11CE',
        points: 3,
      });
      expect(noReason.status).toBe(400);
      expect(errorOf(noReason).message).toBe('Reason is required');
      const board = await t.gql(
        '{ space(id: 1) { loyaltyPointsRanks(first: 5) { list { points address { address } } } } }',
      );
      expect(board.body.data.space.loyaltyPointsRanks.list).toEqual([
        { points: 20, address: { address: '0xA11CE' } },
      ]);
    });
  });

  describe('members', () => {
    it("ends a removed member's access at their next request", async () => {
      const member = await join('leaving@example.com', SPACE_B, 'owner');
      await join('staying@example.com', SPACE_B, 'owner');
      expect((await member.get(`/settings/spaces/${SPACE_B}/members`)).status).toBe(200);
      const accountId = (
        await operator.get(`/settings/spaces/${SPACE_B}/members`)
      ).body!.members.find((m: Json) => m.email === 'leaving@example.com').accountId;
      expect(
        (await operator.delete(`/settings/spaces/${SPACE_B}/members/${accountId}`)).status,
      ).toBe(204);
      const after = await member.get(`/settings/spaces/${SPACE_B}/members`);
      expect(after.status).toBe(404);
      expect(errorOf(after).message).toBe('Space not found');
      expect((await member.get('/settings/server-api/tokens')).body).toEqual([]);
      const page = await member.client.request(`/dashboard/spaces/${SPACE_B}`);
      expect(page.status).toBe(404);
    });

    it('revokes the tokens a removed member made in the space unless kept, naming them in the audit trail', async () => {
      const maker = await join('maker@example.com', SPACE_B, 'owner');
      const keeper = await join('keeper@example.com', SPACE_B, 'owner');
      const makeToken = async (member: Member, name: string) => {
        const created = await member.post('/settings/server-api/tokens', {
          name,
          scopes: ['query'],
          spaceId: SPACE_B,
        });
        expect(created.status).toBe(201);
        return created.body as Json;
      };
      const made = await makeToken(maker, 'maker export');
      const kept = await makeToken(keeper, 'keeper export');
      const works = async (token: Json) =>
        (await t.gql('{ __typename }', undefined, { token: token.token as string })).status;
      expect([await works(made), await works(kept)]).toEqual([200, 200]);

      const members = (await operator.get(`/settings/spaces/${SPACE_B}/members`)).body!
        .members as Json[];
      const idOf = (email: string) => members.find((m) => m.email === email)!.accountId as string;
      // Every token records its creator; the members list counts what each would take along.
      const listed = (await operator.get(`/settings/server-api/tokens?spaceId=${SPACE_B}`))
        .body as unknown as Json[];
      expect(listed.find((token) => token.id === made.id)).toMatchObject({
        createdBy: idOf('maker@example.com'),
      });
      expect(members.find((m) => m.email === 'maker@example.com')).toMatchObject({
        tokensCreated: 1,
      });

      const removeMember = (email: string, query = '') =>
        operator.delete(`/settings/spaces/${SPACE_B}/members/${idOf(email)}${query}`);
      expect((await removeMember('maker@example.com')).status).toBe(204);
      expect((await removeMember('keeper@example.com', '?keepTokens=true')).status).toBe(204);
      expect([await works(made), await works(kept)]).toEqual([401, 200]);

      const trail = (await operator.get(`/settings/audit?spaceId=${SPACE_B}&limit=20`)).body!
        .entries as Json[];
      const removal = (email: string) =>
        trail.find((entry) => entry.action === 'member.remove' && entry.target === email);
      expect(removal('maker@example.com')!.detail).toEqual({
        role: 'owner',
        revokedTokens: [`maker export (${made.prefix}…)`],
      });
      expect(removal('keeper@example.com')!.detail).toEqual({ role: 'owner', tokens: 'kept' });

      const bad = await operator.delete(
        `/settings/spaces/${SPACE_B}/members/${idOf('staying@example.com')}?keepTokens=maybe`,
      );
      expect(bad.status).toBe(400);
      expect(errorOf(bad).message).toBe('keepTokens must be true or false');
    });

    it('revokes every token a removed account made or rotated, in every space', async () => {
      const leaving = await join('gone@example.com', SPACE_B, 'owner');
      const first = await leaving.post('/settings/server-api/tokens', {
        name: 'gone first',
        spaceId: SPACE_B,
      });
      const other = await leaving.post('/settings/server-api/tokens', {
        name: 'gone other',
        spaceId: SPACE_B,
      });
      // A token someone else made, rotated by the leaving account: its new value is theirs.
      const operators = await operator.post('/settings/server-api/tokens', {
        name: 'shared',
        spaceId: SPACE_B,
      });
      const rotated = await leaving.post(
        `/settings/server-api/tokens/${operators.body!.id as string}/rotate`,
        {},
      );
      expect([first.status, other.status, operators.status, rotated.status]).toEqual([
        201, 201, 201, 201,
      ]);
      const accounts = (await operator.get('/settings/accounts')).body as unknown as Json[];
      const id = accounts.find((a) => a.email === 'gone@example.com')!.id as string;
      expect((await operator.delete(`/settings/accounts/${id}`)).status).toBe(204);
      const statuses = [];
      for (const token of [first.body!, other.body!, rotated.body!])
        statuses.push(
          (await t.gql('{ __typename }', undefined, { token: token.token as string })).status,
        );
      expect(statuses).toEqual([401, 401, 401]);
      const trail = (await operator.get('/settings/audit?limit=20')).body!.entries as Json[];
      const entry = trail.find(
        (e) => e.action === 'account.remove' && e.target === 'gone@example.com',
      );
      expect(entry!.detail.revokedTokens).toHaveLength(3);
    });

    it('keeps the last owner of a space', async () => {
      const members = (await operator.get(`/settings/spaces/${SPACE_A}/members`)).body!
        .members as Json[];
      const owners = members.filter((m) => m.role === 'owner');
      expect(owners).toHaveLength(1);
      const demote = await operator.call(
        'PATCH',
        `/settings/spaces/${SPACE_A}/members/${owners[0].accountId}`,
        { role: 'viewer' },
      );
      expect(demote.status).toBe(400);
      expect(errorOf(demote).message).toMatch(/at least one owner/);
    });

    it('refuses an invitation for an unknown role or a bad email, and a link used twice', async () => {
      for (const body of [
        { email: 'x@example.com', role: 'admin' },
        { email: 'not an email', role: 'viewer' },
        {},
      ]) {
        const refused = await operator.post(`/settings/spaces/${SPACE_A}/invitations`, body);
        expect(refused.status).toBe(400);
      }
      const invited = await operator.post(`/settings/spaces/${SPACE_A}/invitations`, {
        email: 'twice@example.com',
        role: 'viewer',
      });
      const secret = new URL(invited.body!.link as string).pathname.split('/').pop()!;
      const members = t.app.get(MembersService);
      await members.accept(secret, { name: 'Twice', password: PASSWORD });
      await expect(members.accept(secret, { name: 'Again', password: PASSWORD })).rejects.toThrow(
        'Invitation not found, used or expired',
      );
    });

    it('refuses names with NUL or a lone surrogate', async () => {
      const invited = await operator.post(`/settings/spaces/${SPACE_A}/invitations`, {
        email: 'nul@example.com',
        role: 'viewer',
      });
      const secret = new URL(invited.body!.link as string).pathname.split('/').pop()!;
      const members = t.app.get(MembersService);
      for (const name of ['bad\u0000name', 'bad\ud800']) {
        await expect(members.accept(secret, { name, password: PASSWORD })).rejects.toThrow(
          /Name must/,
        );
      }
      expect(await members.findOpen(secret)).not.toBeNull();
      const token = await operator.post('/settings/server-api/tokens', { name: 'nul\u0000' });
      expect(token.status).toBe(400);
      expect(errorOf(token).message).toMatch(/control characters/);
    });

    it('kills the open invitations of an owner who is removed, demoted or disabled', async () => {
      const owner = await join('inviter@example.com', SPACE_B, 'owner');
      const links: string[] = [];
      for (const email of ['pending-1@example.com', 'pending-2@example.com']) {
        const invited = await owner.post(`/settings/spaces/${SPACE_B}/invitations`, {
          email,
          role: 'owner',
        });
        expect(invited.status).toBe(201);
        links.push(new URL(invited.body!.link as string).pathname.split('/').pop()!);
      }
      const members = t.app.get(MembersService);
      // A link whose maker lost ownership is dead even where nothing closed it yet.
      await runSql(
        t.app.get(DataSource),
        "UPDATE space_members SET role = 'viewer' WHERE account_id = ?",
        [(await members.list(SPACE_B)).find((m) => m.email === 'inviter@example.com')!.accountId],
      );
      expect(await members.findOpen(links[0])).toBeNull();
      await expect(members.accept(links[0], { name: 'P1', password: PASSWORD })).rejects.toThrow(
        'Invitation not found, used or expired',
      );
      const id = (await members.list(SPACE_B)).find(
        (m) => m.email === 'inviter@example.com',
      )!.accountId;
      await runSql(
        t.app.get(DataSource),
        "UPDATE space_members SET role = 'owner' WHERE account_id = ?",
        [id],
      );
      expect(await members.findOpen(links[1])).not.toBeNull();
      // Removing the maker closes what it left open.
      expect((await operator.delete(`/settings/spaces/${SPACE_B}/members/${id}`)).status).toBe(204);
      await runSql(
        t.app.get(DataSource),
        "INSERT INTO space_members (space_id, account_id, role, created_at) VALUES (?, ?, 'owner', ?)",
        [SPACE_B, id, Date.now()],
      );
      expect(await members.findOpen(links[1])).toBeNull();
      expect(owner.email).toBe('inviter@example.com');
    });

    it('keeps one owner when two owners demote each other at once', async () => {
      const spaceId = 5;
      await t.load([{ type: 'space', id: spaceId, name: 'Duel' }]);
      const first = await join('duel-1@example.com', spaceId, 'owner');
      const second = await join('duel-2@example.com', spaceId, 'owner');
      const ids = (await operator.get(`/settings/spaces/${spaceId}/members`)).body!
        .members as Json[];
      const idOf = (email: string) => ids.find((m) => m.email === email)!.accountId as string;
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([
          first.call('PATCH', `/settings/spaces/${spaceId}/members/${idOf('duel-2@example.com')}`, {
            role: 'viewer',
          }),
          second.call(
            'PATCH',
            `/settings/spaces/${spaceId}/members/${idOf('duel-1@example.com')}`,
            {
              role: 'viewer',
            },
          ),
        ]);
        const after = (await operator.get(`/settings/spaces/${spaceId}/members`)).body!
          .members as Json[];
        expect(after.filter((m) => m.role === 'owner').length).toBeGreaterThanOrEqual(1);
        expect(answers.map((a) => a.status).sort()).toEqual(expect.arrayContaining([200]));
        // Both owners again for the next round.
        for (const email of ['duel-1@example.com', 'duel-2@example.com'])
          await operator.call('PATCH', `/settings/spaces/${spaceId}/members/${idOf(email)}`, {
            role: 'owner',
          });
      }
    });
  });

  describe('accounts', () => {
    it('changes a password with the current one, ending every other session of the account', async () => {
      const email = 'changer@example.com';
      const here = await join(email, SPACE_A, 'viewer');
      const elsewhere = await signIn(email);
      const wrong = await here.post('/settings/account/password', {
        currentPassword: 'not the password',
        newPassword: 'a brand new passphrase',
      });
      expect(wrong.status).toBe(400);
      expect((await elsewhere.get('/settings/server-api/tokens')).status).toBe(200);
      const changed = await here.post('/settings/account/password', {
        currentPassword: PASSWORD,
        newPassword: 'a brand new passphrase',
      });
      expect(changed.status).toBe(204);
      expect((await here.get('/settings/server-api/tokens')).status).toBe(200);
      const ended = await elsewhere.get('/settings/server-api/tokens');
      expect(ended.status).toBe(401);
      expect((await new DashboardClient(base).signIn(email, PASSWORD)).status).toBe(401);
      await signIn(email, 'a brand new passphrase');
    });

    it('disables an account: its sessions end and it cannot sign in until enabled', async () => {
      const email = 'disabled@example.com';
      const member = await join(email, SPACE_A, 'viewer');
      const id = ((await operator.get('/settings/accounts')).body as unknown as Json[]).find(
        (a) => a.email === email,
      )!.id;
      expect((await member.post(`/settings/accounts/${id}/disable`)).status).toBe(403);
      expect((await operator.post(`/settings/accounts/${id}/disable`)).status).toBe(204);
      expect((await member.get('/settings/server-api/tokens')).status).toBe(401);
      expect((await new DashboardClient(base).signIn(email, PASSWORD)).status).toBe(401);
      expect((await operator.post(`/settings/accounts/${id}/enable`)).status).toBe(204);
      await signIn(email);
      expect((await operator.delete(`/settings/accounts/${id}`)).status).toBe(204);
      expect((await new DashboardClient(base).signIn(email, PASSWORD)).status).toBe(401);
    });

    it('never disables or removes the last active operator', async () => {
      const me = ((await operator.get('/settings/accounts')).body as unknown as Json[]).find(
        (a) => a.email === OPERATOR,
      )!;
      for (const attempt of [
        () => operator.post(`/settings/accounts/${me.id}/disable`),
        () => operator.delete(`/settings/accounts/${me.id}`),
      ]) {
        const refused = await attempt();
        expect(refused.status).toBe(400);
        expect(errorOf(refused).message).toBe(
          'The last active operator cannot be disabled or removed',
        );
      }
    });

    it('keeps one active operator when two operators disable each other at once', async () => {
      await t.app.get(AdminsService).create('second-operator@example.com', PASSWORD);
      const second = await signIn('second-operator@example.com');
      const accounts = (await operator.get('/settings/accounts')).body as unknown as Json[];
      const idOf = (email: string) => accounts.find((a) => a.email === email)!.id as string;
      const answers = await Promise.all([
        operator.post(`/settings/accounts/${idOf('second-operator@example.com')}/disable`),
        second.post(`/settings/accounts/${idOf(OPERATOR)}/disable`),
      ]);
      const statuses = answers.map((a) => a.status);
      expect(statuses).toContain(204);
      const after = (await new DashboardClient(base).signIn(OPERATOR, PASSWORD)).status;
      const afterSecond = (
        await new DashboardClient(base).signIn('second-operator@example.com', PASSWORD)
      ).status;
      expect([after, afterSecond]).toContain(303);
      // Whoever is left enables the other again.
      const left = after === 303 ? await signIn(OPERATOR) : second;
      const other = after === 303 ? 'second-operator@example.com' : OPERATOR;
      expect((await left.post(`/settings/accounts/${idOf(other)}/enable`)).status).toBe(204);
      operator = await signIn(OPERATOR);
      expect(
        (await operator.delete(`/settings/accounts/${idOf('second-operator@example.com')}`)).status,
      ).toBe(204);
    });

    it('checks the current password under the sign-in limits', async () => {
      const email = 'guesser@example.com';
      const member = await join(email, SPACE_A, 'viewer');
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const answer = await member.post('/settings/account/password', {
          currentPassword: `guess ${i}`,
          newPassword: 'a brand new passphrase',
        });
        statuses.push(answer.status);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
      expect(statuses[10]).toBe(429);
      const right = await member.post('/settings/account/password', {
        currentPassword: PASSWORD,
        newPassword: 'a brand new passphrase',
      });
      expect(right.status).toBe(429);
    });

    it('refuses an email longer than its column, alike on both databases', async () => {
      const emailOf = (length: number) => `${'a'.repeat(64)}@${'b'.repeat(length - 69)}.com`;
      const refused = await operator.post(`/settings/spaces/${SPACE_A}/invitations`, {
        email: emailOf(255),
        role: 'viewer',
      });
      expect(refused.status).toBe(400);
      expect(errorOf(refused).message).toMatch(/is not an email address/);
      const longest = await operator.post(`/settings/spaces/${SPACE_A}/invitations`, {
        email: emailOf(254),
        role: 'viewer',
      });
      expect(longest.status).toBe(201);
      expect(longest.body!.email).toHaveLength(254);
    });
  });

  describe('the audit trail', () => {
    it('records space changes made through POST /ingest, with the token as the actor', async () => {
      const tokens = t.app.get(AccessTokensService);
      const deployment = await tokens.create('ingest-deployment', ['ingest']);
      const send = (token: string, records: unknown[]) =>
        fetch(`${base}/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': token },
          body: JSON.stringify(records),
        }).then(async (response) => ({ status: response.status, body: await response.json() }));
      expect(
        (await send(deployment.token, [{ type: 'space', id: 9, name: 'Iota' }])).body,
      ).toMatchObject({ accepted: 1 });
      const own = await tokens.create('ingest-iota', ['ingest'], { spaceId: 9 });
      const renamed = await send(own.token, [
        { type: 'space', id: 9, name: 'Iota renamed', alias: 'iota' },
        // Refused (another space): not audited.
        { type: 'space', id: SPACE_A, name: 'Hijacked' },
      ]);
      expect(renamed.body).toMatchObject({ accepted: 1, refused: 1 });

      // Written after the answer (the audit trail never holds up ingestion): waited for.
      const ingested = async () =>
        ((await operator.get('/settings/audit?spaceId=9&limit=10')).body!.entries as Json[]).filter(
          (entry) => entry.action === 'space.ingest',
        );
      let entries = await ingested();
      for (let i = 0; i < 40 && entries.length < 2; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        entries = await ingested();
      }
      expect(
        entries.map(({ actor, spaceId, target, detail }) => ({ actor, spaceId, target, detail })),
      ).toEqual([
        {
          actor: 'token:ingest-iota',
          spaceId: 9,
          target: 'Iota renamed',
          detail: { tokenId: own.id, name: 'Iota renamed', alias: 'iota' },
        },
        {
          actor: 'token:ingest-deployment',
          spaceId: 9,
          target: 'Iota',
          detail: { tokenId: deployment.id, name: 'Iota' },
        },
      ]);
      const alpha = (await operator.get(`/settings/audit?spaceId=${SPACE_A}&limit=500`)).body!
        .entries as Json[];
      expect(alpha.filter((entry) => entry.action === 'space.ingest')).toEqual([]);
    });

    it('records who did what, when and from where, never a secret; owners see their space only', async () => {
      const owner = await join('auditor@example.com', SPACE_B, 'owner');
      const created = await owner.post('/settings/server-api/tokens', {
        name: 'audited',
        spaceId: SPACE_B,
      });
      const rotated = await owner.post(`/settings/server-api/tokens/${created.body!.id}/rotate`, {
        graceSeconds: 60,
      });
      expect(rotated.status).toBe(201);
      expect((await owner.delete(`/settings/server-api/tokens/${rotated.body!.id}`)).status).toBe(
        204,
      );
      expect(
        (await owner.call('PUT', `/settings/spaces/${SPACE_B}/privacy`, { private: true })).status,
      ).toBe(200);
      await new DashboardClient(base).signIn('auditor@example.com', 'wrong password!!');

      const trail = await owner.get(`/settings/audit?spaceId=${SPACE_B}`);
      expect(trail.status).toBe(200);
      const entries = trail.body!.entries as Json[];
      expect(entries.every((e) => e.spaceId === SPACE_B)).toBe(true);
      const actions = entries.map((e) => e.action);
      expect(actions.slice(0, 4)).toEqual([
        'space.privacy',
        'token.revoke',
        'token.rotate',
        'token.create',
      ]);
      expect(entries[0]).toMatchObject({
        actor: 'auditor@example.com',
        address: '127.0.0.1',
        detail: { private: true },
      });
      expect(Date.now() - Date.parse(entries[0].at)).toBeLessThan(60_000);
      expect(entries[3].target).toBe(`audited (${created.body!.prefix}…)`);

      expect((await owner.get('/settings/audit')).status).toBe(403);
      expect((await owner.get(`/settings/audit?spaceId=${SPACE_A}`)).status).toBe(404);

      const deployment = await operator.get('/settings/audit?limit=500');
      const all = deployment.body!.entries as Json[];
      expect(all.map((e) => e.action)).toEqual(
        expect.arrayContaining(['sign-in', 'sign-in.failed', 'member.invite', 'points.adjust']),
      );
      const failed = all.find((e) => e.action === 'sign-in.failed')!;
      expect(failed).toMatchObject({ actor: 'auditor@example.com', actorId: null });

      for (const format of ['csv', 'ndjson']) {
        const exported = await operator.client.request(`/settings/audit?format=${format}`);
        expect(exported.status).toBe(200);
        expect(exported.headers.get('content-disposition')).toBe(
          `attachment; filename="audit-deployment.${format}"`,
        );
        for (const secret of [created.body!.token, rotated.body!.token, PASSWORD])
          expect(exported.text).not.toContain(secret);
        const lines = exported.text.trim().split('\n');
        if (format === 'csv') {
          expect(lines[0]).toBe('at,actor,action,space_id,target,detail,address,id');
          expect(lines).toHaveLength(all.length + 1);
        } else {
          expect(lines.map((line) => JSON.parse(line).id)).toEqual(all.map((e) => e.id));
        }
      }
    });

    it('never records what was typed into the email field of a failed sign-in', async () => {
      await new DashboardClient(base).signIn('P@ssw0rd-Secret!', 'anything at all');
      await new DashboardClient(base).signIn('nobody@example.com', 'anything at all');
      const trail = (await operator.get('/settings/audit?limit=5')).body!.entries as Json[];
      expect(trail.slice(0, 2)).toMatchObject([
        { action: 'sign-in.failed', actor: '(unknown email)', actorId: null },
        { action: 'sign-in.failed', actor: '(unknown email)', actorId: null },
      ]);
      const exported = await operator.client.request('/settings/audit?format=ndjson');
      expect(exported.text).not.toContain('P@ssw0rd-Secret!');
    });

    it('pages with a cursor it checks, and is never cached', async () => {
      const first = await operator.get('/settings/audit?limit=2');
      expect(first.body!.entries).toHaveLength(2);
      const next = await operator.get(`/settings/audit?limit=2&before=${first.body!.next}`);
      expect((next.body!.entries as Json[])[0].id < first.body!.next).toBe(true);
      for (const before of ['ZZZ', "' OR 1=1 --", '']) {
        const refused = await operator.get(`/settings/audit?before=${encodeURIComponent(before)}`);
        expect(refused.status).toBe(400);
        expect(errorOf(refused).message).toMatch(/before must be the id of an audit entry/);
      }
      for (const format of ['json', 'csv', 'ndjson']) {
        const answer = await operator.client.request(`/settings/audit?format=${format}`);
        expect(answer.headers.get('cache-control')).toBe('no-store');
      }
    });

    it('keeps the entries of a removed account', async () => {
      const before = (await operator.get('/settings/audit?limit=500')).body!.entries as Json[];
      const removed = before.filter((e) => e.target === 'disabled@example.com');
      expect(removed.map((e) => e.action)).toEqual(
        expect.arrayContaining(['account.remove', 'account.enable', 'account.disable']),
      );
      expect(removed.length).toBeGreaterThan(0);
    });
  });

  it('resets a forgotten password from the command line, ending its sessions; CLI actions are audited', async () => {
    const email = 'forgetful@example.com';
    const member = await join(email, SPACE_A, 'viewer');
    const reset = await runCli(
      ['admin', 'reset-password', '--email', email],
      { DATABASE_URL: t.db.url },
      'a remembered passphrase\n',
    );
    expect(reset.stderr).toContain(`Set a new password for ${email}`);
    expect(reset.code).toBe(0);
    expect((await member.get('/settings/server-api/tokens')).status).toBe(401);
    await signIn(email, 'a remembered passphrase');
    const unknown = await runCli(
      ['admin', 'reset-password', '--email', 'nobody@example.com'],
      { DATABASE_URL: t.db.url },
      'a remembered passphrase\n',
    );
    expect(unknown).toMatchObject({
      code: 2,
      stderr: 'No account has the email nobody@example.com\n',
    });
    const created = await runCli(['token', 'create', '--name', 'cli job', '--space', '1'], {
      DATABASE_URL: t.db.url,
    });
    expect(created.code).toBe(0);
    const trail = (await operator.get('/settings/audit')).body!.entries as Json[];
    expect(trail.slice(0, 3)).toMatchObject([
      {
        actor: 'cli',
        actorId: null,
        action: 'token.create',
        spaceId: SPACE_A,
        target: `cli job (${created.stdout.trim().slice(0, 12)}…)`,
        address: null,
      },
      { actor: email, action: 'sign-in', address: '127.0.0.1' },
      { actor: 'cli', action: 'account.reset-password', target: email },
    ]);
  });
});
