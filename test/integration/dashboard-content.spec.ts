import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { AuditEntry, AuditService } from '../../src/host/dashboard/audit/audit.service';
import { QuestsService } from '../../src/quests/quests.service';
import { SpacesService } from '../../src/spaces/spaces.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const OPERATOR = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const ALPHA = 1;
/** A private space no member of these specs sees, holding sprint 50 and quest "elsewhere". */
const HIDDEN = 7;

/** A signed-in browser: pages, and forms sent with the session's CSRF token. */
class Person {
  constructor(
    readonly client: DashboardClient,
    readonly csrf: string,
  ) {}

  page(path: string) {
    return this.client.request(path);
  }

  form(path: string, fields: Record<string, string> = {}) {
    return this.client.request(path, { method: 'POST', form: { _csrf: this.csrf, ...fields } });
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
/** Text as the browser shows it. */
const unescape = (text: string | undefined) =>
  text?.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]);
/** What a person reads: the page's alert (error) and status (notice). */
const alertOf = (page: string) => unescape(/role="alert">([^<]*)</.exec(page)?.[1]);
const noticeOf = (page: string) => unescape(/role="status">([^<]*)</.exec(page)?.[1]);
/** The value an input of the form shows. */
const valueOf = (page: string, id: string) =>
  unescape(new RegExp(`id="${id}"[^>]*?value="([^"]*)"`).exec(page)?.[1]);

describe.each(DB_KINDS)('creating and editing spaces, sprints and quests on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let operatorId: string;
  let operator: Person;
  let editor: Person;
  let viewer: Person;
  let spaces: SpacesService;

  const signIn = async (email: string) => {
    const client = new DashboardClient(base);
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return new Person(client, await client.csrfToken());
  };

  /** An account with `role` in Alpha, through an invitation the operator makes. */
  const member = async (email: string, role: SpaceRole) => {
    const members = t.app.get(MembersService);
    const { path } = await members.invite(ALPHA, email, role, operatorId);
    await members.accept(path.split('/').pop()!, { name: email, password: PASSWORD });
    return signIn(email);
  };

  const audit = async (action: string): Promise<AuditEntry[]> =>
    (await t.app.get(AuditService).list({ limit: 500 })).filter((e) => e.action === action);
  const sprintsOf = async (spaceId: number) =>
    (await spaces.listSprints(spaceId)).map(({ id, name, startTime, endTime }) => ({
      id,
      name,
      startTime: new Date(startTime).toISOString(),
      endTime: new Date(endTime).toISOString(),
    }));

  /** A saved form: a 303 to the space, which shows its notice once. */
  const expectSaved = async (
    who: Person,
    answer: { status: number; headers: Headers; text: string },
    spaceId: number,
    notice: string,
  ) => {
    expect({ status: answer.status, alert: alertOf(answer.text) }).toEqual({
      status: 303,
      alert: undefined,
    });
    expect(answer.headers.get('location')).toBe(`/dashboard/spaces/${spaceId}`);
    const shown = await who.page(`/dashboard/spaces/${spaceId}`);
    expect(shown.status).toBe(200);
    expect(noticeOf(shown.text)).toBe(notice);
    const again = await who.page(`/dashboard/spaces/${spaceId}`);
    expect(noticeOf(again.text)).toBeUndefined();
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    spaces = t.app.get(SpacesService);
    operatorId = (await t.app.get(AdminsService).create(OPERATOR, PASSWORD)).id;
    await t.load([
      { type: 'space', id: ALPHA, name: 'Alpha' },
      { type: 'space', id: HIDDEN, name: 'Hidden' },
      {
        type: 'sprint',
        id: 50,
        spaceId: HIDDEN,
        name: 'Hidden sprint',
        startTime: '2026-01-01T00:00:00Z',
        endTime: '2026-02-01T00:00:00Z',
      },
      { type: 'quest', id: 'elsewhere', spaceId: HIDDEN, name: 'Hidden quest', status: 'Active' },
    ]);
    operator = await signIn(OPERATOR);
    editor = await member('editor@example.com', 'editor');
    viewer = await member('viewer@example.com', 'viewer');
  });
  afterAll(() => t?.close());

  it('creates a space with the id proposed, refuses an id taken, and edits it', async () => {
    const form = await operator.page('/dashboard/spaces/new');
    expect(form.status).toBe(200);
    expect(valueOf(form.text, 'space-id')).toBe(String(HIDDEN + 1));

    const taken = await operator.form('/dashboard/spaces/new', {
      id: String(ALPHA),
      name: 'Not Alpha',
      description: 'typed',
    });
    expect(taken.status).toBe(409);
    expect(alertOf(taken.text)).toBe('Space 1 exists already (“Alpha”): choose another id.');
    expect(valueOf(taken.text, 'space-name')).toBe('Not Alpha');
    expect(valueOf(taken.text, 'space-description')).toBe('typed');
    expect(taken.text).toMatch(/id="space-id"[^>]*aria-invalid="true"/);
    expect((await spaces.findSpace(ALPHA))?.name).toBe('Alpha');

    for (const [fields, message] of [
      [{ id: 'x', name: 'Gamma' }, 'Space id must be a whole number from 1 to 2147483647'],
      [{ id: '9', name: '  ' }, 'Name must not be empty'],
      [{ id: '9', name: 'G'.repeat(256) }, 'Name must be at most 255 characters'],
    ] as const) {
      const refused = await operator.form('/dashboard/spaces/new', { description: '', ...fields });
      expect({ fields, status: refused.status, alert: alertOf(refused.text) }).toEqual({
        fields,
        status: 400,
        alert: message,
      });
    }
    expect(await spaces.findSpace(9)).toBeNull();

    const created = await operator.form('/dashboard/spaces/new', {
      id: '8',
      name: ' Gamma ',
      description: 'The third',
    });
    await expectSaved(operator, created, 8, 'The space was created.');
    const [entry] = await audit('space.create');
    expect(entry).toMatchObject({
      actor: OPERATOR,
      spaceId: 8,
      target: 'Gamma',
      detail: { id: 8, name: 'Gamma', description: 'The third' },
      address: '127.0.0.1',
    });

    const edit = await operator.page('/dashboard/spaces/8/edit');
    expect(valueOf(edit.text, 'space-name')).toBe('Gamma');
    expect(valueOf(edit.text, 'space-description')).toBe('The third');
    const refused = await operator.form('/dashboard/spaces/8/edit', { name: '', description: 'x' });
    expect(refused.status).toBe(400);
    expect(valueOf(refused.text, 'space-description')).toBe('x');
    const saved = await operator.form('/dashboard/spaces/8/edit', {
      name: 'Gamma Prime',
      description: '',
    });
    await expectSaved(operator, saved, 8, 'The space was saved.');
    expect(await audit('space.update')).toEqual([
      expect.objectContaining({
        spaceId: 8,
        detail: { id: 8, name: 'Gamma Prime', description: null, previousName: 'Gamma' },
      }),
    ]);
    const queried = await t.gql('{ space(id: 8) { id name description sprints { id } } }');
    expect(queried.body).toEqual({
      data: { space: { id: '8', name: 'Gamma Prime', description: null, sprints: [] } },
    });
  });

  it("sets a space's alias with the Alias field, refuses one taken or malformed, and clears it", async () => {
    const created = await operator.form('/dashboard/spaces/new', {
      id: '20',
      name: 'Aliased',
      description: '',
      alias: ' My-Space ',
    });
    await expectSaved(operator, created, 20, 'The space was created.');
    expect((await spaces.findSpace(20))?.alias).toBe('my-space');
    expect((await audit('space.create')).find((e) => e.spaceId === 20)?.detail).toEqual({
      id: 20,
      name: 'Aliased',
      description: null,
      alias: 'my-space',
    });
    const edit = await operator.page('/dashboard/spaces/20/edit');
    expect(valueOf(edit.text, 'space-alias')).toBe('my-space');
    expect(edit.text).toContain('<label for="space-alias">Alias');

    await t.load([{ type: 'space', id: 21, name: 'Holder', alias: 'taken' }]);
    for (const [alias, message] of [
      ['taken', 'Alias "taken" is taken by another space'],
      [
        'my space',
        'Alias must be 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit',
      ],
    ]) {
      const refused = await operator.form('/dashboard/spaces/20/edit', {
        name: 'Renamed',
        description: '',
        alias,
      });
      expect({ status: refused.status, alert: alertOf(refused.text) }).toEqual({
        status: 400,
        alert: message,
      });
      expect(refused.text).toMatch(/id="space-alias"[^>]*aria-invalid="true"/);
      expect(valueOf(refused.text, 'space-alias')).toBe(alias);
    }
    expect(await spaces.findSpace(20)).toMatchObject({ name: 'Aliased', alias: 'my-space' });

    // A form without the field (a script, a page from before it) keeps the alias.
    const renamed = await operator.form('/dashboard/spaces/20/edit', {
      name: 'Aliased',
      description: '',
    });
    await expectSaved(operator, renamed, 20, 'The space was saved.');
    expect((await spaces.findSpace(20))?.alias).toBe('my-space');

    const cleared = await operator.form('/dashboard/spaces/20/edit', {
      name: 'Aliased',
      description: '',
      alias: '',
    });
    await expectSaved(operator, cleared, 20, 'The space was saved.');
    expect((await spaces.findSpace(20))?.alias).toBeNull();
    expect((await audit('space.update')).find((e) => e.spaceId === 20)?.detail).toEqual({
      id: 20,
      name: 'Aliased',
      description: null,
      alias: null,
      previousAlias: 'my-space',
    });
  });

  it('creates sprints in UTC, refusing start ≥ end, overlaps unless allowed, and ids taken', async () => {
    const path = `/dashboard/spaces/${ALPHA}/sprints/new`;
    const form = await editor.page(path);
    expect(form.status).toBe(200);
    expect(valueOf(form.text, 'sprint-id')).toBe('51');
    expect(form.text).toContain('Start (UTC)');

    const week1 = { id: '10', name: 'Week 1', start: '2026-01-01T00:00', end: '2026-01-08T00:00' };
    await expectSaved(editor, await editor.form(path, week1), ALPHA, 'The sprint was created.');

    const refuse = async (fields: Record<string, string>, status: number, message: string) => {
      const before = await sprintsOf(ALPHA);
      const answer = await editor.form(path, fields);
      expect({ status: answer.status, alert: alertOf(answer.text) }).toEqual({
        status,
        alert: message,
      });
      expect(await sprintsOf(ALPHA)).toEqual(before);
      return answer;
    };
    const backwards = await refuse(
      { id: '11', name: 'Backwards', start: '2026-02-08T00:00', end: '2026-02-01T00:00' },
      400,
      'The end must be after the start.',
    );
    expect(valueOf(backwards.text, 'sprint-name')).toBe('Backwards');
    expect(valueOf(backwards.text, 'sprint-start')).toBe('2026-02-08T00:00');
    await refuse(
      { id: '11', name: 'Empty', start: '2026-02-01T00:00', end: '2026-02-01T00:00' },
      400,
      'The end must be after the start.',
    );
    await refuse(
      { id: '11', name: 'Bad date', start: '31/01/2026', end: '2026-02-01T00:00' },
      400,
      'Start must be a date and time in UTC, such as 2026-01-31 12:00',
    );
    const overlap = {
      id: '11',
      name: 'Week 1b',
      start: '2026-01-07T12:00',
      end: '2026-01-14T00:00',
    };
    const refusedOverlap = await refuse(
      overlap,
      400,
      'These dates overlap sprint “Week 1” (#10), 2026-01-01 00:00 UTC to 2026-01-08 00:00 UTC. ' +
        'Change the dates, or tick “Allow overlapping sprints”.',
    );
    expect(refusedOverlap.text).not.toMatch(/id="sprint-allow-overlap"[^>]*checked/);
    await refuse(
      { ...week1, name: 'Again' },
      409,
      'Sprint 10 exists already in this space (“Week 1”): choose another id, or edit that sprint.',
    );
    const elsewhere = await refuse(
      { id: '50', name: 'Taken', start: '2026-03-01T00:00', end: '2026-03-08T00:00' },
      409,
      'Sprint id 50 is already used by another space: choose another id.',
    );
    expect(elsewhere.text).not.toContain('Hidden');

    await expectSaved(
      editor,
      await editor.form(path, { ...overlap, allowOverlap: 'on' }),
      ALPHA,
      'The sprint was created.',
    );
    // Touching is no overlap: Week 1b ends when this one starts.
    const week2 = {
      id: '12',
      name: 'Week 2',
      start: '2026-01-14T00:00',
      end: '2026-01-21T00:00:30',
    };
    await expectSaved(editor, await editor.form(path, week2), ALPHA, 'The sprint was created.');
    expect((await audit('sprint.create')).reverse()).toEqual([
      expect.objectContaining({
        actor: 'editor@example.com',
        spaceId: ALPHA,
        target: '“Week 1” (#10)',
        detail: expect.objectContaining({ overlaps: [] }),
      }),
      expect.objectContaining({
        target: '“Week 1b” (#11)',
        detail: {
          id: 11,
          name: 'Week 1b',
          startTime: '2026-01-07T12:00:00.000Z',
          endTime: '2026-01-14T00:00:00.000Z',
          overlaps: ['“Week 1” (#10)'],
        },
      }),
      expect.objectContaining({ target: '“Week 2” (#12)' }),
    ]);

    // Editing: the current values filled in, an overlap refused unless allowed.
    const edit = `/dashboard/spaces/${ALPHA}/sprints/12/edit`;
    const page = await editor.page(edit);
    expect(page.status).toBe(200);
    expect(valueOf(page.text, 'sprint-name')).toBe('Week 2');
    expect(valueOf(page.text, 'sprint-start')).toBe('2026-01-14T00:00');
    expect(valueOf(page.text, 'sprint-end')).toBe('2026-01-21T00:00:30');
    const moved = { name: 'Week 2', start: '2026-01-13T00:00', end: '2026-01-21T00:00' };
    const before = await sprintsOf(ALPHA);
    const refusedMove = await editor.form(edit, moved);
    expect(refusedMove.status).toBe(400);
    expect(alertOf(refusedMove.text)).toContain('overlap sprint “Week 1b” (#11)');
    expect(await sprintsOf(ALPHA)).toEqual(before);
    await expectSaved(
      editor,
      await editor.form(edit, { ...moved, name: 'Week two', allowOverlap: 'on' }),
      ALPHA,
      'The sprint was saved.',
    );
    expect(await audit('sprint.update')).toEqual([
      expect.objectContaining({ target: '“Week two” (#12)', spaceId: ALPHA }),
    ]);

    const queried = await t.gql(
      `{ space(id: ${ALPHA}) { sprints { id name startTime endTime } } }`,
    );
    expect(queried.body.data.space.sprints).toEqual([
      {
        id: 10,
        name: 'Week 1',
        startTime: '2026-01-01T00:00:00.000Z',
        endTime: '2026-01-08T00:00:00.000Z',
      },
      {
        id: 11,
        name: 'Week 1b',
        startTime: '2026-01-07T12:00:00.000Z',
        endTime: '2026-01-14T00:00:00.000Z',
      },
      {
        id: 12,
        name: 'Week two',
        startTime: '2026-01-13T00:00:00.000Z',
        endTime: '2026-01-21T00:00:00.000Z',
      },
    ]);

    // Another space's sprint is no sprint of this one.
    for (const id of ['50', '999', 'x'])
      expect((await editor.page(`/dashboard/spaces/${ALPHA}/sprints/${id}/edit`)).status).toBe(404);
    const forged = await editor.form(`/dashboard/spaces/${ALPHA}/sprints/50/edit`, moved);
    expect(forged.status).toBe(404);
    expect(await sprintsOf(HIDDEN)).toEqual([
      expect.objectContaining({ id: 50, name: 'Hidden sprint' }),
    ]);
  });

  it('creates and edits quests with labelled statuses, optional dates and cap', async () => {
    const path = `/dashboard/spaces/${ALPHA}/quests/new`;
    const form = await editor.page(path);
    expect(form.status).toBe(200);
    expect(form.text).toMatch(/<option value="CapReached"\s*>\s*Cap reached\s*<\/option>/);
    expect(form.text).toMatch(/<option value="NotStarted"\s*>\s*Not started\s*<\/option>/);

    const id = 'follow/x ?&#';
    const quest = {
      id,
      name: 'Follow on X',
      status: 'CapReached',
      type: 'social',
      start: '2026-01-01T00:00',
      end: '2026-02-01T00:00',
      cap: '100',
    };
    const questsOf = () => t.app.get(QuestsService).listQuests(ALPHA);
    const refuse = async (fields: Record<string, string>, status: number, message: string) => {
      const before = await questsOf();
      const answer = await editor.form(path, fields);
      expect({ fields, status: answer.status, alert: alertOf(answer.text) }).toEqual({
        fields,
        status,
        alert: message,
      });
      expect(await questsOf()).toEqual(before);
      return answer;
    };
    await refuse({ ...quest, status: 'Bogus' }, 400, 'Choose a status from the list.');
    await refuse(
      { ...quest, cap: '-1' },
      400,
      'Cap must be a whole number from 0 to 2147483647, or empty for no cap',
    );
    await refuse({ ...quest, end: '2025-12-31T00:00' }, 400, 'The end must be after the start.');
    await refuse({ ...quest, type: 't'.repeat(65) }, 400, 'Type must be at most 64 characters');
    await refuse({ ...quest, id: '' }, 400, 'Id must not be empty');
    await refuse(
      { ...quest, id: 'elsewhere' },
      409,
      'Quest id elsewhere is already used by another space: choose another id.',
    );

    await expectSaved(editor, await editor.form(path, quest), ALPHA, 'The quest was created.');
    await refuse(
      { ...quest, name: 'Again' },
      409,
      `Quest ${id} exists already in this space (“Follow on X”): choose another id, or edit that quest.`,
    );

    const fields = 'id name status type startTime endTime cap participantsCount';
    const read = async () =>
      (await t.gql(`query($id: ID!) { quest(id: $id) { ${fields} } }`, { id })).body.data.quest;
    expect(await read()).toEqual({
      id,
      name: 'Follow on X',
      status: 'CapReached',
      type: 'social',
      startTime: '2026-01-01T00:00:00.000Z',
      endTime: '2026-02-01T00:00:00.000Z',
      cap: 100,
      participantsCount: 0,
    });

    const edit = `/dashboard/spaces/${ALPHA}/quests/${encodeURIComponent(id)}/edit`;
    const page = await editor.page(edit);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<option value="CapReached" selected>\s*Cap reached/);
    expect(valueOf(page.text, 'quest-type')).toBe('social');
    expect(valueOf(page.text, 'quest-cap')).toBe('100');
    expect(valueOf(page.text, 'quest-end')).toBe('2026-02-01T00:00');
    const refusedEdit = await editor.form(edit, { ...quest, start: '2026-03-01T00:00' });
    expect(refusedEdit.status).toBe(400);
    expect(refusedEdit.text).toMatch(/id="quest-end"[^>]*aria-invalid="true"/);

    // Empty optional fields clear what was stored.
    const cleared = {
      name: 'Follow us',
      status: 'NotStarted',
      type: '',
      start: '',
      end: '',
      cap: '',
    };
    await expectSaved(editor, await editor.form(edit, cleared), ALPHA, 'The quest was saved.');
    expect(await read()).toEqual({
      id,
      name: 'Follow us',
      status: 'NotStarted',
      type: null,
      startTime: null,
      endTime: null,
      cap: null,
      participantsCount: 0,
    });
    expect((await audit('quest.create'))[0]).toMatchObject({
      actor: 'editor@example.com',
      spaceId: ALPHA,
      target: id,
      detail: { id, status: 'CapReached', cap: 100, startTime: '2026-01-01T00:00:00.000Z' },
    });
    expect((await audit('quest.update'))[0]).toMatchObject({
      target: id,
      detail: { name: 'Follow us', status: 'NotStarted', questType: null, cap: null },
    });

    expect((await editor.page(`/dashboard/spaces/${ALPHA}/quests/elsewhere/edit`)).status).toBe(
      404,
    );
  });

  it('refuses a viewer every form, and a member every space it is not in, changing nothing', async () => {
    const sprints = await sprintsOf(ALPHA);
    const quests = await t.app.get(QuestsService).listQuests(ALPHA);
    const entries = (await t.app.get(AuditService).list({ limit: 500 })).length;
    const sprint = {
      id: '90',
      name: 'Viewer sprint',
      start: '2027-01-01T00:00',
      end: '2027-01-02T00:00',
    };
    const quest = {
      id: 'viewer-quest',
      name: 'Viewer quest',
      status: 'Active',
      type: '',
      start: '',
      end: '',
      cap: '',
    };
    for (const [path, fields] of [
      [`/dashboard/spaces/${ALPHA}/sprints/new`, sprint],
      [`/dashboard/spaces/${ALPHA}/sprints/10/edit`, sprint],
      [`/dashboard/spaces/${ALPHA}/quests/new`, quest],
      [`/dashboard/spaces/${ALPHA}/edit`, { name: 'Viewer space', description: '' }],
      ['/dashboard/spaces/new', { id: '90', name: 'Viewer space', description: '' }],
    ] as const) {
      const page = await viewer.page(path);
      const sent = await viewer.form(path, fields);
      expect({ path, page: page.status, sent: sent.status }).toEqual({
        path,
        page: 403,
        sent: 403,
      });
      expect(alertOf(sent.text)).toMatch(/not allow|Only operators/);
    }
    // An editor edits sprints and quests, not the space itself, and creates no space.
    expect((await editor.page(`/dashboard/spaces/${ALPHA}/edit`)).status).toBe(403);
    expect((await editor.page('/dashboard/spaces/new')).status).toBe(403);
    // A space the account does not see: the same 404 as one that does not exist.
    expect((await editor.page(`/dashboard/spaces/${HIDDEN}/sprints/new`)).status).toBe(404);
    expect((await editor.form(`/dashboard/spaces/${HIDDEN}/quests/new`, quest)).status).toBe(404);

    expect(await sprintsOf(ALPHA)).toEqual(sprints);
    expect(await t.app.get(QuestsService).listQuests(ALPHA)).toEqual(quests);
    expect(await spaces.findSpace(90)).toBeNull();
    expect((await spaces.findSpace(ALPHA))?.name).toBe('Alpha');
    expect((await t.app.get(AuditService).list({ limit: 500 })).length).toBe(entries);
  });
});
