import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { AuditEntry, AuditService } from '../../src/host/dashboard/audit/audit.service';
import { normaliseUpload } from '../../src/host/dashboard/points-upload-parser';
import { KEPT_UPLOADS } from '../../src/host/dashboard/points-uploads.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';

const OPERATOR = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const ALPHA = 1;
const BETA = 2;

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

interface LedgerRow {
  key: string;
  address: string;
  points: number;
  reason: string | null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const unescape = (text: string | undefined) =>
  text?.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]);
/** The text of the page's alert (error) or status (notice), as a person reads it. */
const alertOf = (page: string) => unescape(/role="alert">([^<]*)</.exec(page)?.[1]);
const statusOf = (page: string) => unescape(/role="status">([^<]*)</.exec(page)?.[1]);
const formKeyOf = (page: string) => /name="key" value="(dashboard:[^"]+)"/.exec(page)?.[1];
const uploadIdOf = (location: string | null) =>
  /\/points\/uploads\/([0-9a-f-]{36})$/.exec(location ?? '')?.[1];
/** A summary's value on the upload page: <dt>term</dt><dd>value</dd>. */
const summaryOf = (page: string, term: string) =>
  new RegExp(`<dt>${term}</dt>\\s*<dd[^>]*>([^<]*)<`).exec(page)?.[1];

const CSV = [
  'address,points,reason,occurredAt',
  '0xA11CE,25,Community call host,',
  '0xB0B,10,,2026-01-05T10:00:00Z',
  '0xA11CE,-5,Duplicate claim,',
  '0x c,5,bad address,',
  '0xCAFE,0,zero,',
  '0xB0B,7,,',
  '0xD00D,3,"Bug report, critical",',
].join('\n');
const CSV_TOTALS = { '0xA11CE': 20, '0xB0B': 17, '0xD00D': 3 };

describe.each(DB_KINDS)('the points pages on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let operatorId: string;
  let editor: Person;
  let viewer: Person;

  const signIn = async (email: string) => {
    const client = new DashboardClient(base);
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return new Person(client, await client.csrfToken());
  };

  const member = async (email: string, spaceId: number, role: SpaceRole) => {
    const members = t.app.get(MembersService);
    const { path } = await members.invite(spaceId, email, role, operatorId);
    await members.accept(path.split('/').pop()!, { name: email, password: PASSWORD });
    return signIn(email);
  };

  const ledger = async (spaceId = ALPHA): Promise<LedgerRow[]> =>
    (
      await t.app
        .get<DataSource>(getDataSourceToken())
        .query(
          'SELECT event_key AS k, address_key AS a, points AS p, reason AS r FROM points_events WHERE space_id = ? ORDER BY event_key',
          [spaceId],
        )
    ).map((row: { k: string; a: string; p: number | string; r: string | null }) => ({
      key: row.k,
      address: row.a,
      points: Number(row.p),
      reason: row.r,
    }));

  /** The all-time board of a space, as an API client reads it through POST /query. */
  const board = async (spaceId = ALPHA) => {
    const answer = await t.gql(
      `{ space(id: ${spaceId}) { loyaltyPointsRanks(first: 50) { list { points address { address } } } } }`,
    );
    return Object.fromEntries(
      (
        answer.body.data.space.loyaltyPointsRanks.list as Array<{
          points: number;
          address: { address: string };
        }>
      ).map((entry) => [entry.address.address, entry.points]),
    );
  };

  /** One address's all-time points, as an API client reads them. */
  const pointsOf = async (address: string, spaceId = ALPHA) => {
    const answer = await t.gql(
      `query ($address: String!) { space(id: ${spaceId}) { addressLoyaltyPoints(address: $address) { points } } }`,
      { address },
    );
    return answer.body.data.space.addressLoyaltyPoints?.points as number | undefined;
  };

  const audit = async (): Promise<AuditEntry[]> =>
    (await t.app.get(AuditService).list({ limit: 500 })).filter(
      (entry) => entry.action === 'points.adjust',
    );

  /** The single form as the space page renders it, sent with `fields`. */
  const adjust = async (person: Person, fields: Record<string, string>, spaceId = ALPHA) => {
    const key = formKeyOf((await person.page(`/dashboard/spaces/${spaceId}`)).text);
    expect(key).toBeDefined();
    return person.form(`/dashboard/spaces/${spaceId}/points`, { key: key!, ...fields });
  };

  const upload = async (person: Person, fields: Record<string, string>, spaceId = ALPHA) =>
    person.form(`/dashboard/spaces/${spaceId}/points/uploads`, fields);

  /** Uploads and follows to the preview: its id and page. */
  const preview = async (content: string, reason = '', name = 'points.csv') => {
    const sent = await upload(editor, { content, reason, name });
    expect(sent.status).toBe(303);
    const id = uploadIdOf(sent.headers.get('location'));
    expect(id).toBeDefined();
    const page = await editor.page(sent.headers.get('location')!);
    expect(page.status).toBe(200);
    return { id: id!, path: sent.headers.get('location')!, page: page.text };
  };

  const applyUpload = async (path: string, person: Person = editor) => {
    const applied = await person.form(`${path}/apply`);
    if (applied.status !== 303) return applied;
    expect(applied.headers.get('location')).toBe(path);
    return person.page(path);
  };

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    operatorId = (await t.app.get(AdminsService).create(OPERATOR, PASSWORD)).id;
    await t.load([
      { type: 'space', id: ALPHA, name: 'Alpha' },
      { type: 'space', id: BETA, name: 'Beta' },
    ]);
    editor = await member('editor@example.com', ALPHA, 'editor');
    viewer = await member('viewer@example.com', ALPHA, 'viewer');
  });
  afterAll(() => t?.close());

  it('grants and deducts for one address, each with its reason in the ledger and the audit trail', async () => {
    const granted = await adjust(editor, {
      direction: 'grant',
      address: '0xFEED',
      points: '40',
      reason: 'Quest fix',
    });
    expect(granted.status).toBe(303);
    expect(granted.headers.get('location')).toBe(`/dashboard/spaces/${ALPHA}?address=0xFEED`);
    expect(granted.setCookies.join()).toMatch(/lb_notice=points\.granted/);
    const deducted = await adjust(editor, {
      direction: 'deduct',
      address: ' 0xfeed ',
      points: '15',
      reason: '  Refund ',
    });
    expect(deducted.status).toBe(303);
    expect(deducted.setCookies.join()).toMatch(/lb_notice=points\.deducted/);

    const rows = (await ledger()).filter((row) => row.address === '0xfeed');
    expect(
      rows.map(({ points, reason }) => ({ points, reason })).sort((a, b) => a.points - b.points),
    ).toEqual([
      { points: -15, reason: 'Refund' },
      { points: 40, reason: 'Quest fix' },
    ]);
    for (const row of rows) expect(row.key).toMatch(/^dashboard:[0-9a-f-]{36}$/);
    expect((await board())['0xFEED']).toBe(25);
    const page = await editor.page(`/dashboard/spaces/${ALPHA}?address=0xFEED`);
    expect(page.text).toMatch(/0xFEED is ranked 1 with 25 points\./);
    const entries = (await audit()).filter((entry) => entry.target?.toLowerCase() === '0xfeed');
    expect(entries.map((entry) => entry.detail)).toEqual([
      { points: -15, reason: 'Refund', key: expect.stringMatching(/^dashboard:/) },
      { points: 40, reason: 'Quest fix', key: expect.stringMatching(/^dashboard:/) },
    ]);
    expect(entries[0]).toMatchObject({ actor: 'editor@example.com', spaceId: ALPHA });
  });

  it('applies a form sent twice once, and refuses its key sent again with other values', async () => {
    const key = formKeyOf((await editor.page(`/dashboard/spaces/${ALPHA}`)).text)!;
    const fields = { key, direction: 'grant', address: '0xECHO', points: '12', reason: 'Resent' };
    const first = await editor.form(`/dashboard/spaces/${ALPHA}/points`, fields);
    const again = await editor.form(`/dashboard/spaces/${ALPHA}/points`, fields);
    expect([first.status, again.status]).toEqual([303, 303]);
    expect((await ledger()).filter((row) => row.key === key)).toEqual([
      { key, address: '0xecho', points: 12, reason: 'Resent' },
    ]);
    expect((await board())['0xECHO']).toBe(12);
    expect((await audit()).filter((entry) => entry.detail?.key === key)).toHaveLength(1);

    const changed = await editor.form(`/dashboard/spaces/${ALPHA}/points`, {
      ...fields,
      points: '50',
    });
    expect(changed.status).toBe(400);
    expect(alertOf(changed.text)).toMatch(/^This form was already sent with other values/);
    // The page again, with what was typed and a fresh key to send it deliberately.
    expect(changed.text).toContain('value="50"');
    expect(changed.text).toMatch(/value="grant"\s+required\s+checked/);
    expect(formKeyOf(changed.text)).not.toBe(key);
    expect((await board())['0xECHO']).toBe(12);
  });

  it('refuses a form without a choice, with a signed amount, a bad address or no reason, changing nothing', async () => {
    const before = await ledger();
    const good = { direction: 'deduct', address: '0xBAD', points: '5', reason: 'Because' };
    for (const [fields, message] of [
      [{ ...good, direction: '' }, 'Choose whether to grant or deduct the points'],
      [{ ...good, points: '-5' }, 'Points must be a whole number from 1 to 1,000,000,000'],
      [{ ...good, points: '0' }, 'Points must be a whole number from 1 to 1,000,000,000'],
      [{ ...good, address: '0x a' }, 'address must be printable ASCII without spaces'],
      [{ ...good, reason: '  ' }, 'Reason is required'],
      [{ ...good, reason: 'x'.repeat(201) }, 'Reason must be at most 200 characters'],
    ] as const) {
      const refused = await adjust(editor, fields);
      expect({ status: refused.status, alert: alertOf(refused.text) }).toEqual({
        status: 400,
        alert: message,
      });
      expect(refused.text).toContain(`value="${fields.address}"`);
    }
    const noKey = await editor.form(`/dashboard/spaces/${ALPHA}/points`, good);
    expect(noKey.status).toBe(400);
    expect(alertOf(noKey.text)).toBe(
      'This form is out of date: check the values and send it again',
    );
    expect(await ledger()).toEqual(before);
  });

  it('previews a CSV upload with each refused line, applies it, and applies nothing the second time', async () => {
    const before = await board();
    const { path, page } = await preview(CSV, 'Spring campaign');
    expect(summaryOf(page, 'Lines')).toBe('7');
    expect(summaryOf(page, 'Valid lines')).toBe('5');
    expect(summaryOf(page, 'Refused lines')).toBe('2');
    expect(summaryOf(page, 'Points granted')).toBe('45');
    expect(summaryOf(page, 'Points deducted')).toBe('5');
    expect(summaryOf(page, 'Read as')).toBe('CSV');
    expect(page).toMatch(
      /<td data-label="Line" class="num">5<\/td>\s*<td data-label="Problem">address must be printable ASCII without spaces<\/td>/,
    );
    expect(page).toMatch(
      /<td data-label="Line" class="num">6<\/td>\s*<td data-label="Problem">points must not be 0<\/td>/,
    );
    expect(page).toContain('<td data-label="Reason">Bug report, critical</td>');
    expect(page).toContain('<td data-label="Reason">Spring campaign</td>');
    expect(page).toMatch(/<button type="submit">Apply 5 lines<\/button>/);
    // Nothing is applied by a preview.
    expect(await board()).toEqual(before);

    const applied = await applyUpload(path);
    expect(statusOf(applied.text)).toMatch(/: 5 applied, 0 already applied, 0 refused\.$/);
    expect(applied.text).not.toContain('Apply 5 lines');
    const sha = normaliseUpload(CSV, ALPHA).sha256.slice(0, 32);
    const rows = (await ledger()).filter((row) => row.key.startsWith(`upload:${sha}:`));
    expect(rows).toEqual(
      expect.arrayContaining([
        { key: `upload:${sha}:2`, address: '0xa11ce', points: 25, reason: 'Community call host' },
        { key: `upload:${sha}:3`, address: '0xb0b', points: 10, reason: 'Spring campaign' },
        { key: `upload:${sha}:8`, address: '0xd00d', points: 3, reason: 'Bug report, critical' },
      ]),
    );
    expect(rows).toHaveLength(5);
    const after = await board();
    for (const [address, points] of Object.entries(CSV_TOTALS))
      expect({ address, points: after[address] }).toEqual({
        address,
        points: (before[address] ?? 0) + points,
      });
    expect((await audit()).find((entry) => entry.detail?.upload)).toMatchObject({
      target: 'upload points.csv',
      detail: { lines: 5, applied: 5, unchanged: 0, refused: 0, reason: 'Spring campaign' },
    });

    // Applying it again (a resend) leaves it as it is.
    expect((await applyUpload(path)).status).toBe(200);
    // The same file again, saved with other line ends: every line was applied already.
    const again = await preview(CSV.replace(/\n/g, '\r\n') + '\r\n', 'Spring campaign');
    expect(again.path).not.toBe(path);
    const second = await applyUpload(again.path);
    expect(statusOf(second.text)).toMatch(/: 0 applied, 5 already applied, 0 refused\.$/);
    expect(await board()).toEqual(after);
    expect((await ledger()).filter((row) => row.key.startsWith(`upload:${sha}:`))).toEqual(rows);
  });

  it('previews and applies NDJSON, refusing lines without a reason when there is no reason for all', async () => {
    const ndjson = [
      '{"address":"0xN1","points":8,"reason":"Own reason"}',
      '{"address":"0xN2","points":4}',
      '{"address":"0xN3","points":-2,"reason":"Penalty","occurredAt":"2026-02-01T00:00:00Z"}',
      '{"address":"0xN4","points":1,"spaceId":2}',
    ].join('\n');
    const { path, page } = await preview(ndjson, '', 'points.ndjson');
    expect(summaryOf(page, 'Read as')).toBe('NDJSON');
    expect(summaryOf(page, 'Valid lines')).toBe('2');
    expect(page).toMatch(
      /class="num">2<\/td>\s*<td data-label="Problem">reason is required: give one on the line or for the whole upload</,
    );
    expect(page).toMatch(
      /class="num">4<\/td>\s*<td data-label="Problem">unknown field &quot;spaceId&quot;/,
    );
    const applied = await applyUpload(path);
    expect(statusOf(applied.text)).toMatch(/2 applied, 0 already applied, 0 refused\.$/);
    expect(await pointsOf('0xN1')).toBe(8);
    expect(await pointsOf('0xN2')).toBeUndefined();
    // A negative total is on no board: the ledger holds the deduction, with its reason.
    expect((await ledger()).filter((row) => row.address.startsWith('0xn'))).toEqual([
      expect.objectContaining({ address: '0xn1', points: 8, reason: 'Own reason' }),
      expect.objectContaining({ address: '0xn3', points: -2, reason: 'Penalty' }),
    ]);
    const status = await editor.page(`${path}/status`);
    expect(JSON.parse(status.text)).toEqual({
      status: 'applied',
      stalled: false,
      expired: false,
      done: 2,
      total: 2,
      applied: 2,
      unchanged: 0,
      refused: 0,
    });
  });

  it('applies a large upload in parts, and refuses an apply with nothing to apply, changing nothing', async () => {
    const lines = Array.from({ length: 12_000 }, (_, i) => `0xBULK${i % 3000},${(i % 7) + 1}`);
    const { path, page } = await preview(['address,points', ...lines].join('\n'), 'Bulk grant');
    expect(summaryOf(page, 'Valid lines')).toBe('12,000');
    expect(page).toContain('The first 10 lines');
    const applied = await applyUpload(path);
    expect(statusOf(applied.text)).toMatch(/12,000 applied, 0 already applied, 0 refused\.$/);
    // 0xBULK0 has lines 0, 3000, 6000 and 9000.
    expect(await pointsOf('0xBULK0')).toBe(
      1 + ((3000 % 7) + 1) + ((6000 % 7) + 1) + ((9000 % 7) + 1),
    );
    expect(await pointsOf('0xBULK2999')).toBe(
      [2999, 5999, 8999, 11999].reduce((sum, i) => sum + (i % 7) + 1, 0),
    );

    const before = await ledger();
    const broken = await preview('address,points\n0x a,5\n0xB,0', 'Nothing');
    expect(broken.page).not.toContain('data-points-apply');
    const refused = await applyUpload(broken.path);
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toBe(
      'No line of this upload is valid: there is nothing to apply',
    );
    expect(await ledger()).toEqual(before);
  });

  it('refuses an upload too large, too long or unreadable with the form again, and stores nothing', async () => {
    const recent = (await editor.page(`/dashboard/spaces/${ALPHA}/points/uploads`)).text;
    const count = (page: string) => (page.match(/class="upload-name"/g) ?? []).length;
    const big =
      'address,points,reason\n' +
      '0x0123456789abcdef0123456789abcdef01234567,1,r\n'.repeat(230_000);
    const tooBig = await upload(editor, { content: big, name: 'big.csv' });
    expect(tooBig.status).toBe(413);
    expect(alertOf(tooBig.text)).toMatch(/^The upload is 10\.\d MB: at most 10 MB/);
    // Too big to show again: the form is there, empty.
    expect(tooBig.text).toContain('id="points-content"');
    const tooLong = await upload(editor, {
      content: 'address,points\n' + '0xA,1\n'.repeat(100_001),
    });
    expect(tooLong.status).toBe(413);
    expect(alertOf(tooLong.text)).toBe(
      'The upload has 100,001 lines: at most 100,000 a file. Split it into smaller files',
    );
    const unreadable = await upload(editor, {
      content: 'wallet,points\n0xA,1',
      reason: 'Kept',
    });
    expect(unreadable.status).toBe(400);
    expect(alertOf(unreadable.text)).toMatch(/unknown column "wallet"/);
    expect(unreadable.text).toContain('wallet,points\n0xA,1</textarea');
    expect(unreadable.text).toContain('value="Kept"');
    const after = (await editor.page(`/dashboard/spaces/${ALPHA}/points/uploads`)).text;
    expect(count(after)).toBe(count(recent));
  });

  it(`keeps the lines of a space's ${KEPT_UPLOADS} newest uploads, and refuses to apply an expired one`, async () => {
    const first = await preview('address,points\n0xOLD,1', 'Old');
    for (let i = 0; i < KEPT_UPLOADS; i++) await preview(`address,points\n0xNEW${i},1`, 'New');
    const expired = await editor.page(first.path);
    expect(statusOf(expired.text)).toMatch(/^This upload expired/);
    expect(expired.text).not.toContain('data-points-apply');
    const refused = await applyUpload(first.path);
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toMatch(/^This upload expired/);
    expect((await board())['0xOLD']).toBeUndefined();
    const stored = await t.app
      .get<DataSource>(getDataSourceToken())
      .query('SELECT COUNT(*) AS n FROM points_upload_lines WHERE upload_id = ?', [first.id]);
    expect(Number(stored[0].n)).toBe(0);
  });

  it("refuses a viewer every points page and form, and hides one space's uploads from another's", async () => {
    const before = await ledger();
    const { path, id } = await preview('address,points\n0xVIEW,5', 'Mine');
    for (const response of [
      await viewer.form(`/dashboard/spaces/${ALPHA}/points`, {
        direction: 'grant',
        address: '0xVIEW',
        points: '5',
        reason: 'Sneaky',
      }),
      await viewer.page(`/dashboard/spaces/${ALPHA}/points/uploads`),
      await upload(viewer, { content: 'address,points\n0xVIEW,5', reason: 'Sneaky' }),
      await viewer.page(path),
      await viewer.form(`${path}/apply`),
    ])
      expect({ status: response.status, alert: alertOf(response.text) }).toEqual({
        status: 403,
        alert: 'Your role in this space does not allow this.',
      });
    expect((await viewer.page(`/dashboard/spaces/${ALPHA}`)).text).not.toContain('Adjust points');
    expect(await ledger()).toEqual(before);

    const operator = await signIn(OPERATOR);
    const elsewhere = await operator.page(`/dashboard/spaces/${BETA}/points/uploads/${id}`);
    expect(elsewhere.status).toBe(404);
    expect(alertOf(elsewhere.text)).toBe('There is no such points upload in this space.');
    expect(
      (await operator.form(`/dashboard/spaces/${BETA}/points/uploads/${id}/apply`)).status,
    ).toBe(404);
    expect(await ledger(BETA)).toEqual([]);
  });
});
