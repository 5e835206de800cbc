import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { AuditEntry, AuditService } from '../../src/host/dashboard/audit/audit.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { runSql } from '../utils/sql';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const OPERATOR = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const SPACE_A = 1;
const SPACE_B = 2;
const SPACE_C = 3;

/** A signed-in browser: pages, and forms sent with the session's CSRF token. */
class Person {
  constructor(
    readonly client: DashboardClient,
    readonly email: string,
    readonly csrf: string,
  ) {}

  page(path: string) {
    return this.client.request(path);
  }

  form(path: string, fields: Record<string, string | string[]> = {}) {
    return this.client.request(path, { method: 'POST', form: { _csrf: this.csrf, ...fields } });
  }

  /** A form that redirects (Post/Redirect/Get), then the page it leads to, as a browser does. */
  async formThenPage(path: string, fields: Record<string, string | string[]> = {}) {
    const sent = await this.form(path, fields);
    expect(sent.status).toBe(303);
    return { sent, page: await this.page(sent.headers.get('location')!) };
  }
}

/** The text of the page's alert (error) or status (notice), as a person reads it. */
const alertOf = (page: string) => /role="alert">([^<]*)</.exec(page)?.[1];
const noticeOf = (page: string) => /class="alert notice" role="status">([^<]*)</.exec(page)?.[1];
const NEW_TOKEN = /id="new-token"[^>]*value="(lpt_[0-9A-Za-z]+)"/;

describe.each(DB_KINDS)('the team pages on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let operatorId: string;
  let operator: Person;

  const signIn = async (email: string, password = PASSWORD) => {
    const client = new DashboardClient(base);
    expect((await client.signIn(email, password)).status).toBe(303);
    return new Person(client, email, await client.csrfToken());
  };

  /** An account with `role` in `spaceId`, through an invitation the operator makes. */
  const member = async (email: string, spaceId: number, role: SpaceRole) => {
    const members = t.app.get(MembersService);
    const { path } = await members.invite(spaceId, email, role, operatorId);
    const secret = path.split('/').pop()!;
    const existing = await t.app.get(AdminsService).findByEmail(email);
    await members.accept(
      secret,
      existing ? { password: PASSWORD } : { name: email, password: PASSWORD },
    );
    return signIn(email);
  };

  const audit = async (action: string): Promise<AuditEntry[]> =>
    (await t.app.get(AuditService).list({ limit: 500 })).filter((e) => e.action === action);
  const tokenNamed = async (name: string) =>
    (await t.app.get(AccessTokensService).list()).filter((token) => token.name === name);

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    operatorId = (await t.app.get(AdminsService).create(OPERATOR, PASSWORD)).id;
    await t.load([
      { type: 'space', id: SPACE_A, name: 'Alpha' },
      { type: 'space', id: SPACE_B, name: 'Beta' },
    ]);
    operator = await signIn(OPERATOR);
  });
  afterAll(() => t?.close());

  it('shows a member only their spaces, and an unseen space as the same 404 as an unknown one', async () => {
    const viewer = await member('seer@example.com', SPACE_A, 'viewer');
    const list = await viewer.page('/dashboard/spaces');
    expect(list.status).toBe(200);
    expect(list.text).toContain('href="/dashboard/spaces/1"');
    expect(list.text).not.toContain('href="/dashboard/spaces/2"');
    expect(list.text).toMatch(/Alpha<\/strong><\/a>[\s\S]*?<span class="badge role">Viewer</);

    const unseen = await viewer.page(`/dashboard/spaces/${SPACE_B}`);
    const unknown = await viewer.page('/dashboard/spaces/999999');
    const junk = await viewer.page('/dashboard/spaces/abc');
    expect([unseen.status, unknown.status, junk.status]).toEqual([404, 404, 404]);
    expect(alertOf(unseen.text)).toBe('Space not found.');
    expect(unseen.text).toBe(unknown.text);
    expect(junk.text).toBe(unknown.text);
    expect(unseen.text).not.toContain('Beta');
    // A page of its own, with the way back: not the Spaces list.
    expect(unknown.text).toContain('<h1>Not found</h1>');
    expect(unknown.text).toContain('<a href="/dashboard/spaces">← Spaces</a>');
    expect(unknown.text).not.toContain('<ul class="spaces">');
    // Every page of a space it does not see is that same page.
    const members = await viewer.page(`/dashboard/spaces/${SPACE_B}/members`);
    expect(members.status).toBe(404);
    expect(members.text).toBe(unknown.text);

    // Nor do the forms reach it, whatever they send.
    const privacy = await viewer.form(`/dashboard/spaces/${SPACE_B}/privacy`, { private: 'true' });
    expect(privacy.status).toBe(404);
    const own = await viewer.form(`/dashboard/spaces/${SPACE_A}/privacy`, { private: 'true' });
    expect(own.status).toBe(403);
    expect(alertOf(own.text)).toBe('Your role in this space does not allow this.');
    const page = await viewer.page(`/dashboard/spaces/${SPACE_A}`);
    expect(page.text).not.toContain('Private</span>');
    expect(page.text).not.toContain('Adjust points');
    expect(page.text).not.toContain('/members"');
    expect(await audit('space.privacy')).toEqual([]);
  });

  it('gives a viewer no token form, and refuses its forged token form without creating one', async () => {
    const viewer = await member('readonly@example.com', SPACE_A, 'viewer');
    const settings = await viewer.page('/dashboard/settings');
    expect(settings.text).toContain('API tokens are managed by the owners of each space.');
    expect(settings.text).not.toContain('id="token-name"');
    expect(settings.text).not.toContain('<table class="tokens"');
    for (const spaceId of ['deployment', String(SPACE_A), '']) {
      const forged = await viewer.form('/dashboard/settings/server-api/tokens', {
        name: 'viewer-token',
        scopes: 'query',
        spaceId,
      });
      expect(forged.status).toBe(403);
      expect(forged.text).not.toMatch(NEW_TOKEN);
    }
    expect(await tokenNamed('viewer-token')).toEqual([]);
  });

  it('lets an owner make tokens of its space only, with an expiry, each audited with the address', async () => {
    const owner = await member('maker@example.com', SPACE_A, 'owner');
    const settings = await owner.page('/dashboard/settings');
    expect(settings.text).toMatch(/<option value="1"\s*>\s*Alpha \(#1\)\s*<\/option>/);
    expect(settings.text).not.toContain('value="deployment"');
    expect(settings.text).not.toContain('value="2"');

    const { page: created } = await owner.formThenPage('/dashboard/settings/server-api/tokens', {
      name: 'alpha-bot',
      scopes: 'query',
      spaceId: String(SPACE_A),
      expires: 'date',
      expiresOn: '2030-01-31',
    });
    const value = NEW_TOKEN.exec(created.text)?.[1];
    expect(created.text).toContain(
      '<time datetime="2030-01-31T23:59:59.999Z">31 Jan 2030, 23:59 UTC</time>',
    );
    expect(value).toBeDefined();
    const [stored] = await tokenNamed('alpha-bot');
    expect(stored).toMatchObject({ spaceId: SPACE_A, expiresAt: '2030-01-31T23:59:59.999Z' });
    const [entry] = (await audit('token.create')).filter((e) => e.target?.startsWith('alpha-bot'));
    expect(entry).toMatchObject({
      actor: 'maker@example.com',
      spaceId: SPACE_A,
      target: `alpha-bot (${stored.prefix}…)`,
      detail: { scopes: ['query'], expiresAt: '2030-01-31T23:59:59.999Z' },
      address: '127.0.0.1',
    });
    expect(JSON.stringify(entry)).not.toContain(value);

    await owner.formThenPage('/dashboard/settings/server-api/tokens', {
      name: 'alpha-30',
      scopes: 'query',
      spaceId: String(SPACE_A),
      expires: '30d',
    });
    const [month] = await tokenNamed('alpha-30');
    // The expiry is counted from the form's arrival, the creation time a moment later.
    const lifetime = Date.parse(month.expiresAt!) - Date.parse(month.createdAt);
    expect(Math.round(lifetime / 1000)).toBe(30 * 86_400);

    for (const [fields, status, message] of [
      [{ spaceId: String(SPACE_B) }, 404, 'Space not found'],
      [{ spaceId: 'deployment' }, 403, 'Only operators make deployment tokens'],
      [{ spaceId: String(SPACE_A), expires: 'date' }, 400, 'Choose the date the token expires'],
      [{ spaceId: String(SPACE_A), expires: 'date', expiresOn: '2001-01-01' }, 400, 'in the past'],
      [{ spaceId: String(SPACE_A), expires: 'soon' }, 400, 'is not understood'],
    ] as const) {
      const refused = await owner.form('/dashboard/settings/server-api/tokens', {
        name: 'refused-token',
        scopes: 'query',
        ...fields,
      });
      expect({ fields, status: refused.status }).toEqual({ fields, status });
      expect(alertOf(refused.text)).toContain(message);
      expect(refused.text).toContain('value="refused-token"');
    }
    expect(await tokenNamed('refused-token')).toEqual([]);
  });

  it('rotates with the grace chosen: none stops the old value at once, an hour keeps both', async () => {
    const owner = await member('rotor@example.com', SPACE_A, 'owner');
    const make = async (name: string) => {
      const { page } = await owner.formThenPage('/dashboard/settings/server-api/tokens', {
        name,
        scopes: 'query',
        spaceId: String(SPACE_A),
      });
      return { value: NEW_TOKEN.exec(page.text)![1], id: (await tokenNamed(name))[0].id };
    };
    const answers = async (token: string) =>
      (await t.gql('{ __typename }', undefined, { token })).status;

    const hard = await make('rotate-now');
    const confirm = await owner.page(`/dashboard/settings/server-api/tokens/${hard.id}/rotate`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toMatch(/id="grace-3600"[^>]*checked/);
    const { sent, page: now } = await owner.formThenPage(
      `/dashboard/settings/server-api/tokens/${hard.id}/rotate`,
      { graceSeconds: '0' },
    );
    expect(sent.headers.get('location')).toBe('/dashboard/settings');
    expect(now.text).toContain('The old value stopped working at once.');
    const fresh = NEW_TOKEN.exec(now.text)![1];
    expect([await answers(hard.value), await answers(fresh)]).toEqual([401, 200]);

    const soft = await make('rotate-soft');
    const { page: later } = await owner.formThenPage(
      `/dashboard/settings/server-api/tokens/${soft.id}/rotate`,
      { graceSeconds: '3600' },
    );
    const next = NEW_TOKEN.exec(later.text)![1];
    expect(later.text).toContain('The old value keeps working until');
    expect([await answers(soft.value), await answers(next)]).toEqual([200, 200]);
    const [old] = (await tokenNamed('rotate-soft')).filter((token) => token.id === soft.id);
    expect(Date.parse(old.expiresAt!) - Date.now()).toBeGreaterThan(3590_000);
    expect(
      (await audit('token.rotate')).find((e) => e.target?.startsWith('rotate-soft')),
    ).toMatchObject({ spaceId: SPACE_A, detail: { graceSeconds: 3600 }, address: '127.0.0.1' });

    // A grace outside the choices is refused, and nothing is rotated.
    const odd = await make('rotate-odd');
    const refused = await owner.form(`/dashboard/settings/server-api/tokens/${odd.id}/rotate`, {
      graceSeconds: '-1',
    });
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toContain('Rotation grace');
    expect(await tokenNamed('rotate-odd')).toHaveLength(1);
    expect(await answers(odd.value)).toBe(200);
  });

  it('answers "does not exist" for a token the account may not manage, and leaves it working', async () => {
    const { page: created } = await operator.formThenPage('/dashboard/settings/server-api/tokens', {
      name: 'deployment-only',
      scopes: 'query',
    });
    const value = NEW_TOKEN.exec(created.text)![1];
    const [token] = await tokenNamed('deployment-only');
    expect(token.spaceId).toBeNull();
    const owner = await member('other-owner@example.com', SPACE_A, 'owner');
    const settings = await owner.page('/dashboard/settings');
    expect(settings.text).not.toContain('deployment-only');
    for (const [method, path] of [
      ['GET', 'revoke'],
      ['POST', 'revoke'],
      ['GET', 'rotate'],
      ['POST', 'rotate'],
    ]) {
      const url = `/dashboard/settings/server-api/tokens/${token.id}/${path}`;
      const answer = method === 'GET' ? await owner.page(url) : await owner.form(url);
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 404 });
      expect(alertOf(answer.text)).toBe('That token does not exist or was revoked already.');
    }
    expect((await t.gql('{ __typename }', undefined, { token: value })).status).toBe(200);
    expect(await tokenNamed('deployment-only')).toHaveLength(1);

    // The operator revokes it: audited with the address.
    expect(
      (await operator.form(`/dashboard/settings/server-api/tokens/${token.id}/revoke`)).status,
    ).toBe(303);
    expect((await t.gql('{ __typename }', undefined, { token: value })).status).toBe(401);
    expect(
      (await audit('token.revoke')).find((e) => e.target?.startsWith('deployment-only')),
    ).toMatchObject({ actor: OPERATOR, spaceId: null, address: '127.0.0.1' });
  });

  it('toggles privacy from the space page, audited, told once; a refusal changes nothing', async () => {
    const owner = await member('privy@example.com', SPACE_B, 'owner');
    const { sent: made, page } = await owner.formThenPage(`/dashboard/spaces/${SPACE_B}/privacy`, {
      private: 'true',
    });
    expect(made.headers.get('location')).toBe(`/dashboard/spaces/${SPACE_B}`);
    expect(page.text).toContain('<span class="badge private">Private</span>');
    expect(noticeOf(page.text)).toContain('The space is private now');
    // Told once: a reload shows the page without it.
    expect(noticeOf((await owner.page(`/dashboard/spaces/${SPACE_B}`)).text)).toBeUndefined();
    expect(page.text).toContain('Make public');
    expect(await audit('space.privacy')).toEqual([
      expect.objectContaining({ spaceId: SPACE_B, detail: { private: true } }),
    ]);
    expect(
      (await owner.form(`/dashboard/spaces/${SPACE_B}/privacy`, { private: 'maybe' })).status,
    ).toBe(400);
    expect(await audit('space.privacy')).toHaveLength(1);
    await owner.form(`/dashboard/spaces/${SPACE_B}/privacy`, { private: 'false' });
  });

  it('invites, changes roles, withdraws and removes from the members page, keeping one owner', async () => {
    await t.load([{ type: 'space', id: SPACE_C, name: 'Gamma' }]);
    const owner = await member('team-owner@example.com', SPACE_C, 'owner');
    const members = `/dashboard/spaces/${SPACE_C}/members`;
    const { sent, page: invited } = await owner.formThenPage(
      `${members.replace('/members', '')}/invitations`,
      { email: 'New.Person@Example.com', role: 'editor' },
    );
    expect(sent.headers.get('location')).toBe(members);
    expect(sent.text).not.toContain('/dashboard/invitations/');
    const link = /id="invitation-link"[^>]*value="([^"]+)"/.exec(invited.text)?.[1];
    expect(link).toMatch(new RegExp(`^${base}/dashboard/invitations/[A-Za-z0-9_-]{43}$`));
    expect(invited.text).toContain('It works once, for 7 days');
    const again = await owner.page(members);
    expect(again.text).not.toContain(link);
    expect(again.text).toMatch(/<td data-label="Email">new\.person@example\.com<\/td>/);

    const duplicate = await owner.form(`/dashboard/spaces/${SPACE_C}/invitations`, {
      email: 'team-owner@example.com',
      role: 'viewer',
    });
    expect(duplicate.status).toBe(409);
    expect(alertOf(duplicate.text)).toContain('is a member of this space already');
    const badRole = await owner.form(`/dashboard/spaces/${SPACE_C}/invitations`, {
      email: 'x@example.com',
      role: 'admin',
    });
    expect(badRole.status).toBe(400);
    expect(alertOf(badRole.text)).toBe('role must be one of owner, editor, viewer');

    const [open] = await t.app.get(MembersService).openInvitations(SPACE_C);
    const withdrawn = await owner.formThenPage(
      `${members.replace('/members', '')}/invitations/${open.id}/withdraw`,
    );
    expect(withdrawn.sent.headers.get('location')).toBe(members);
    expect(noticeOf(withdrawn.page.text)).toBe('The invitation was withdrawn.');
    expect((await new DashboardClient(base).request(new URL(link!).pathname)).status).toBe(404);
    expect((await audit('invitation.withdraw'))[0]).toMatchObject({
      target: 'new.person@example.com',
    });

    const helper = await member('helper@example.com', SPACE_C, 'viewer');
    const helperId = (await t.app.get(AdminsService).findByEmail('helper@example.com'))!.id;
    const ownerId = (await t.app.get(AdminsService).findByEmail('team-owner@example.com'))!.id;
    const role = await owner.formThenPage(`${members}/${helperId}/role`, { role: 'editor' });
    expect(role.sent.headers.get('location')).toBe(members);
    expect(noticeOf(role.page.text)).toBe('The role was changed.');
    expect(noticeOf((await owner.page(members)).text)).toBeUndefined();
    expect((await helper.page(`/dashboard/spaces/${SPACE_C}`)).text).toContain('Adjust points');
    expect((await audit('member.role'))[0]).toMatchObject({
      target: 'helper@example.com',
      detail: { from: 'viewer', to: 'editor' },
    });

    // The last owner cannot step down or leave.
    const last = await owner.form(`${members}/${ownerId}/role`, { role: 'viewer' });
    expect(last.status).toBe(400);
    expect(alertOf(last.text)).toBe(
      'A space keeps at least one owner: make another member owner first',
    );
    expect((await owner.form(`${members}/${ownerId}/remove`)).status).toBe(400);

    const removed = await owner.formThenPage(`${members}/${helperId}/remove`);
    expect(removed.sent.headers.get('location')).toBe(members);
    expect(noticeOf(removed.page.text)).toBe('The member was removed.');
    expect((await helper.page(`/dashboard/spaces/${SPACE_C}`)).status).toBe(404);
    expect((await owner.form(`${members}/${helperId}/remove`)).status).toBe(404);
  });

  it("names each token's creator, and removes a member with their tokens unless kept", async () => {
    const space = 7;
    await t.load([{ type: 'space', id: space, name: 'Eta' }]);
    const owner = await member('eta-owner@example.com', space, 'owner');
    const leaving = await member('eta-leaving@example.com', space, 'owner');
    const staying = await member('eta-staying@example.com', space, 'owner');
    const make = async (person: Person, name: string) => {
      const { page } = await person.formThenPage('/dashboard/settings/server-api/tokens', {
        name,
        scopes: 'query',
        spaceId: String(space),
        expires: 'never',
      });
      return NEW_TOKEN.exec(page.text)![1];
    };
    const gone = await make(leaving, 'eta-gone');
    const kept = await make(staying, 'eta-kept');
    const settings = await owner.page('/dashboard/settings');
    expect(settings.text).toMatch(
      /<td data-label="Name">eta-gone<\/td>[\s\S]*?<span class="hint from"> by eta-leaving@example\.com<\/span>/,
    );

    const members = `/dashboard/spaces/${space}/members`;
    const page = await owner.page(members);
    const idOf = async (email: string) => (await t.app.get(AdminsService).findByEmail(email))!.id;
    const leavingId = await idOf('eta-leaving@example.com');
    const stayingId = await idOf('eta-staying@example.com');
    // Only a member with tokens gets the choice, unticked: removing revokes unless kept.
    expect(page.text).toMatch(
      new RegExp(`type="checkbox"\\s+id="keep-tokens-${leavingId}"\\s+name="keepTokens"`),
    );
    expect(page.text).toContain('>Keep their 1 token</label');
    expect(page.text).not.toContain(`keep-tokens-${await idOf('eta-owner@example.com')}`);

    await owner.formThenPage(`${members}/${leavingId}/remove`);
    await owner.formThenPage(`${members}/${stayingId}/remove`, { keepTokens: 'on' });
    const status = async (token: string) =>
      (await t.gql('{ __typename }', undefined, { token })).status;
    expect([await status(gone), await status(kept)]).toEqual([401, 200]);
    const removals = await audit('member.remove');
    expect(removals.find((e) => e.target === 'eta-leaving@example.com')?.detail).toEqual({
      role: 'owner',
      revokedTokens: [expect.stringMatching(/^eta-gone \(lpt_\w+…\)$/)],
    });
    expect(removals.find((e) => e.target === 'eta-staying@example.com')?.detail).toEqual({
      role: 'owner',
      tokens: 'kept',
    });
    // The kept token still names who made it, though they left the space.
    expect((await owner.page('/dashboard/settings')).text).toMatch(
      /<td data-label="Name">eta-kept<\/td>[\s\S]*?> by eta-staying@example\.com<\/span>/,
    );
  });

  it('accepts an invitation on its page: a new account, then an existing one, each signed in', async () => {
    const members = t.app.get(MembersService);
    const { path } = await members.invite(SPACE_A, 'joiner@example.com', 'editor', operatorId);
    const browser = new DashboardClient(base);
    const form = await browser.request(path);
    expect(form.status).toBe(200);
    expect(form.text).toContain('Join Alpha');
    const tokenOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1];
    // Every form answered carries a fresh token (in its cookie too), as the sign-in form does.
    let csrf = tokenOf(form.text);
    const send = async (fields: Record<string, string>) => {
      const answer = await browser.request(path, {
        method: 'POST',
        form: { _csrf: csrf, ...fields },
      });
      if (answer.status !== 303) csrf = tokenOf(answer.text);
      return answer;
    };

    const differ = await send({ name: 'Jo', password: PASSWORD, passwordRepeat: `${PASSWORD}!` });
    expect(differ.status).toBe(400);
    expect(alertOf(differ.text)).toBe('The two passwords differ.');
    const short = await send({ name: 'Jo', password: 'short', passwordRepeat: 'short' });
    expect(short.status).toBe(400);
    expect(alertOf(short.text)).toBe('The password must be at least 12 characters');
    expect(await t.app.get(AdminsService).findByEmail('joiner@example.com')).toBeNull();
    const forged = await new DashboardClient(base).request(path, {
      method: 'POST',
      form: { _csrf: csrf, name: 'Jo', password: PASSWORD, passwordRepeat: PASSWORD },
    });
    expect(forged.status).toBe(403);
    expect(await t.app.get(AdminsService).findByEmail('joiner@example.com')).toBeNull();

    // Another site's form (no cookie of ours) changes nothing, and its page says so.
    expect(forged.text).toContain('The form expired or came from another site.');
    const joined = await send({ name: 'Jo Joiner', password: PASSWORD, passwordRepeat: PASSWORD });
    expect(joined.status).toBe(303);
    expect(joined.headers.get('location')).toBe(`/dashboard/spaces/${SPACE_A}`);
    expect(joined.setCookies.find((c) => c.startsWith('lb_session='))).toMatch(
      /HttpOnly; SameSite=Strict/,
    );
    const space = await browser.request(`/dashboard/spaces/${SPACE_A}`);
    expect(space.status).toBe(200);
    expect(noticeOf(space.text)).toBe('Welcome: you joined the space.');
    expect(space.text).toContain('Your role: <strong>Editor</strong>.');
    expect(space.text).toContain('Jo Joiner · joiner@example.com');
    expect((await audit('member.join'))[0]).toMatchObject({
      actor: 'joiner@example.com',
      spaceId: SPACE_A,
      detail: { role: 'editor', newAccount: true },
      address: '127.0.0.1',
    });
    const used = await browser.request(path);
    expect(used.status).toBe(404);
    expect(used.text).toContain('This invitation link is unknown, was used already');
    expect((await browser.request('/dashboard/invitations/nonsense')).status).toBe(404);

    // The same account, invited to another space: its password, not a new one. The page is the
    // one a new email gets (only the secret, its token and the space differ): whoever holds the
    // link learns nothing of the accounts.
    const second = await members.invite(SPACE_B, 'joiner@example.com', 'viewer', operatorId);
    const fresh = await members.invite(SPACE_B, 'nobody-yet@example.com', 'viewer', operatorId);
    const other = new DashboardClient(base);
    const page = await other.request(second.path);
    const newcomer = await new DashboardClient(base).request(fresh.path);
    const shape = (text: string) =>
      text
        .replace(/value="[A-Za-z0-9_.-]{20,}"/g, 'value="…"')
        .replace(/\/dashboard\/invitations\/[A-Za-z0-9_-]+/g, '/dashboard/invitations/…')
        .replace(/joiner@example\.com|nobody-yet@example\.com/g, 'EMAIL')
        .replace(/Viewer|Editor/g, 'ROLE');
    expect(shape(page.text)).toBe(shape(newcomer.text));
    expect(page.text).toContain('Repeat the password');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)![1];
    const wrong = await other.request(second.path, {
      method: 'POST',
      form: {
        _csrf: token,
        name: 'ignored',
        password: 'not the password at all',
        passwordRepeat: 'not the password at all',
      },
    });
    expect(wrong.status).toBe(401);
    expect(alertOf(wrong.text)).toBe('The password of joiner@example.com is incorrect');
    const token2 = /name="_csrf" value="([^"]+)"/.exec(wrong.text)![1];
    const ok = await other.request(second.path, {
      method: 'POST',
      form: { _csrf: token2, name: 'ignored', password: PASSWORD, passwordRepeat: PASSWORD },
    });
    expect(ok.status).toBe(303);
    // The account keeps its name.
    expect((await t.app.get(AdminsService).findByEmail('joiner@example.com'))?.name).toBe(
      'Jo Joiner',
    );
    const list = await other.request('/dashboard/spaces');
    expect(list.text).toContain('href="/dashboard/spaces/1"');
    expect(list.text).toContain('href="/dashboard/spaces/2"');
  });

  it('changes the own password on the account page and signs out every other session', async () => {
    const here = await member('changer@example.com', SPACE_A, 'viewer');
    const elsewhere = await signIn('changer@example.com');
    const account = await here.page('/dashboard/account');
    expect(account.text).toMatch(/Alpha<\/a>\s*<span class="badge role">Viewer<\/span>/);
    const change = (fields: Record<string, string>) =>
      here.form('/dashboard/account/password', fields);
    const NEW = 'a brand new pass phrase';
    const differ = await change({
      currentPassword: PASSWORD,
      newPassword: NEW,
      repeatPassword: 'other one here',
    });
    expect([differ.status, alertOf(differ.text)]).toEqual([400, 'The new passwords differ.']);
    const wrong = await change({
      currentPassword: 'wrong wrong wrong',
      newPassword: NEW,
      repeatPassword: NEW,
    });
    expect([wrong.status, alertOf(wrong.text)]).toEqual([400, 'The current password is incorrect']);
    const short = await change({
      currentPassword: PASSWORD,
      newPassword: 'short',
      repeatPassword: 'short',
    });
    expect(short.status).toBe(400);
    expect((await elsewhere.page('/dashboard/spaces')).status).toBe(200);

    const done = await here.formThenPage('/dashboard/account/password', {
      currentPassword: PASSWORD,
      newPassword: NEW,
      repeatPassword: NEW,
    });
    expect(done.sent.headers.get('location')).toBe('/dashboard/account');
    expect(noticeOf(done.page.text)).toBe(
      'Your password was changed. Every other session of your account was signed out.',
    );
    expect((await elsewhere.page('/dashboard/spaces')).headers.get('location')).toBe(
      '/dashboard/sign-in?next=%2Fdashboard%2Fspaces',
    );
    expect((await new DashboardClient(base).signIn('changer@example.com', NEW)).status).toBe(303);
    expect((await audit('account.password'))[0]).toMatchObject({ actor: 'changer@example.com' });
  });

  it('lets operators alone disable, enable and remove accounts, never the last operator', async () => {
    const someone = await member('managed@example.com', SPACE_A, 'owner');
    const refused = await someone.page('/dashboard/accounts');
    expect(refused.status).toBe(403);
    expect(
      await someone.form(`/dashboard/accounts/${operatorId}/disable`).then((r) => r.status),
    ).toBe(403);
    expect(refused.text).not.toContain('href="/dashboard/accounts"');

    const list = await operator.page('/dashboard/accounts');
    expect(list.status).toBe(200);
    expect(list.text).toContain('managed@example.com');
    expect(list.text).toContain('href="/dashboard/accounts"');
    const id = (await t.app.get(AdminsService).findByEmail('managed@example.com'))!.id;
    const disabled = await operator.formThenPage(`/dashboard/accounts/${id}/disable`);
    expect(disabled.sent.headers.get('location')).toBe('/dashboard/accounts');
    expect(noticeOf(disabled.page.text)).toBe(
      'The account was disabled and signed out everywhere.',
    );
    expect((await someone.page('/dashboard/spaces')).headers.get('location')).toBe(
      '/dashboard/sign-in?next=%2Fdashboard%2Fspaces',
    );
    expect((await new DashboardClient(base).signIn('managed@example.com', PASSWORD)).status).toBe(
      401,
    );
    await operator.form(`/dashboard/accounts/${id}/enable`);
    // Enabling it again changes nothing, and records nothing.
    const enabled = (await audit('account.enable')).length;
    expect((await operator.form(`/dashboard/accounts/${id}/enable`)).status).toBe(303);
    expect(await audit('account.enable')).toHaveLength(enabled);
    expect((await new DashboardClient(base).signIn('managed@example.com', PASSWORD)).status).toBe(
      303,
    );

    const self = await operator.form(`/dashboard/accounts/${operatorId}/disable`);
    expect(self.status).toBe(400);
    expect(alertOf(self.text)).toBe('The last active operator cannot be disabled or removed');

    const confirm = await operator.page(`/dashboard/accounts/${id}/remove`);
    expect(confirm.text).toContain('Remove managed@example.com?');
    expect((await operator.form(`/dashboard/accounts/${id}/remove`)).status).toBe(303);
    expect(await t.app.get(AdminsService).findById(id)).toBeNull();
    expect((await operator.page(`/dashboard/accounts/${id}/remove`)).status).toBe(404);
    expect((await audit('account.remove'))[0]).toMatchObject({ target: 'managed@example.com' });
  });

  it("shows operators the deployment's audit trail, owners their spaces', paged newest first", async () => {
    const auditService = t.app.get(AuditService);
    for (let i = 0; i < 55; i++)
      await auditService.record({
        actor: 'cli',
        action: 'points.adjust',
        spaceId: SPACE_B,
        target: `0xpage${i}`,
        detail: { points: 12_500 + i, reason: 'paged' },
      });
    const owner = await member('auditor@example.com', SPACE_B, 'owner');
    await member('auditor@example.com', SPACE_A, 'viewer');
    const first = await owner.page('/dashboard/audit');
    expect(first.status).toBe(200);
    expect(first.text).toContain('Beta (#2)');
    expect(first.text).not.toContain('The whole deployment');
    const targets = (page: string) =>
      [...page.matchAll(/data-label="Target">([^<]*)</g)].map((m) => m[1]);
    expect(targets(first.text)).toHaveLength(50);
    expect(targets(first.text)[0]).toBe('0xpage54');
    expect(targets(first.text)[49]).toBe('0xpage5');
    // Numbers with thousands separators, times to the second with the exact instant beside.
    expect(first.text).toContain('points: 12,554; reason: paged');
    expect(first.text).toMatch(
      /<td data-label="Time"><time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d UTC<\/time><\/td>/,
    );
    expect(first.text).toContain('href="/settings/audit?format=csv&amp;spaceId=2"');
    const older = /href="(\/dashboard\/audit\?before=[^"]+)"/
      .exec(first.text)![1]
      .replace(/&amp;/g, '&');
    const second = await owner.page(older);
    expect(targets(second.text)[0]).toBe('0xpage4');
    expect(second.text).toContain('← Newest');
    expect((await owner.page('/dashboard/audit?spaceId=1')).status).toBe(403);
    expect((await owner.page('/dashboard/audit?before=nope')).status).toBe(400);
    const csv = await owner.page('/settings/audit?format=csv&spaceId=2');
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = csv.text.split('\n').filter(Boolean);
    expect(lines[0]).toBe('at,actor,action,space_id,target,detail,address,id');
    expect(lines.filter((line) => line.includes(',0xpage')).length).toBe(55);

    const viewer = await member('no-audit@example.com', SPACE_A, 'viewer');
    expect((await viewer.page('/dashboard/audit')).status).toBe(403);
    expect((await viewer.page('/dashboard/spaces')).text).not.toContain('href="/dashboard/audit"');

    const whole = await operator.page('/dashboard/audit');
    expect(whole.text).toContain('The whole deployment');
    expect(whole.text).toContain('href="/settings/audit?format=ndjson"');
    const filtered = await operator.page('/dashboard/audit?spaceId=1');
    expect(filtered.text).not.toContain('0xpage');
  });

  it('keeps the data as it was when a session-bound form is forged', async () => {
    const id = operatorId;
    const forged = await operator.client.request(`/dashboard/accounts/${id}/disable`, {
      method: 'POST',
      form: { _csrf: 'forged' },
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('That form expired or came from another site.');
    const rows = await runSql<{ disabled_at: unknown }>(
      t.app.get<DataSource>(getDataSourceToken()),
      'SELECT disabled_at FROM admins WHERE id = ?',
      [id],
    );
    expect(rows[0].disabled_at).toBeNull();
  });
});
