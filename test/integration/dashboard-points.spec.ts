import { getDataSourceToken } from '@nestjs/typeorm';
import { request as httpRequest } from 'node:http';
import type { DataSource, Repository } from 'typeorm';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { AuditEntry, AuditService } from '../../src/host/dashboard/audit/audit.service';
import { IngestService } from '../../src/ingest/ingest.service';
import { PointsUploadLineEntity } from '../../src/host/dashboard/points-upload-line.entity';
import {
  KEPT_UPLOAD_MS,
  KEPT_UPLOADS,
  normaliseUpload,
} from '../../src/host/dashboard/forms/points-upload-parser';
import { PointsUploads } from '../../src/host/dashboard/points-uploads.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

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
  new RegExp(`<dt>${term}</dt>\\s*<dd[^>]*>([^<]*)<`).exec(page)?.[1].trim();
/** The time of lines without one, as the upload page's summary gives it (ms), or its words. */
const linesTimeOf = (page: string) => {
  const dd = /<dt>Time of lines without one<\/dt>\s*<dd>([\s\S]*?)<\/dd>/.exec(page)?.[1] ?? '';
  const at = /datetime="([^"]+)"/.exec(dd)?.[1];
  return at === undefined ? dd.trim() : Date.parse(at);
};

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
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const iso = (ms: number) => new Date(ms).toISOString();

/** What came back to a body sent in pieces: the answer, and how much of the body was sent by then. */
interface EarlyAnswer {
  status: number;
  location: string | undefined;
  setCookie: string[];
  sentBytes: number;
  bodyBytes: number;
}

/**
 * POSTs a form body of `bodyBytes` in 64 KB pieces, each when the socket takes it, and stops at the
 * answer: a server that reads the whole body first answers only once all of it was sent.
 */
function postInPieces(
  url: string,
  headers: Record<string, string>,
  bodyBytes: number,
): Promise<EarlyAnswer> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const piece = Buffer.alloc(64 * 1024, 'a');
    const request = httpRequest(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(bodyBytes),
        ...headers,
      },
    });
    request.on('response', (response) => {
      answered = true;
      resolve({
        status: response.statusCode ?? 0,
        location: response.headers.location,
        setCookie: response.headers['set-cookie'] ?? [],
        sentBytes,
        bodyBytes,
      });
      response.resume();
      request.destroy();
    });
    // The server closes the connection once it has answered: writing on then fails.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    const write = () => {
      while (!answered && sentBytes < bodyBytes) {
        const size = Math.min(piece.length, bodyBytes - sentBytes);
        sentBytes += size;
        if (!request.write(size === piece.length ? piece : piece.subarray(0, size)))
          return void request.once('drain', write);
      }
      if (!answered) request.end();
    };
    write();
  });
}

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
      await runSql(
        t.app.get<DataSource>(getDataSourceToken()),
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

  const audit = async (action = 'points.adjust'): Promise<AuditEntry[]> =>
    (await t.app.get(AuditService).list({ limit: 500 })).filter((entry) => entry.action === action);

  const sql = (query: string, parameters: unknown[] = []) =>
    runSql(t.app.get<DataSource>(getDataSourceToken()), query, parameters);

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

  /** One address's points on a sprint's board. */
  const sprintPointsOf = async (address: string, sprintId: number) => {
    const answer = await t.gql(
      `query ($address: String!, $sprint: Int) { space(id: ${ALPHA}) { addressLoyaltyPoints(address: $address, sprintId: $sprint) { points } } }`,
      { address, sprint: sprintId },
    );
    return answer.body.data.space.addressLoyaltyPoints?.points as number | undefined;
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
    const { id, path, page } = await preview(CSV, 'Spring campaign');
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
    expect(linesTimeOf(page)).toBe('When the upload is applied');
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
    const applies = (await audit('points.upload')).filter((entry) => entry.detail?.upload === id);
    expect(applies).toEqual([
      expect.objectContaining({
        actor: 'editor@example.com',
        spaceId: ALPHA,
        target: 'points.csv',
        detail: expect.objectContaining({
          upload: id,
          lines: 5,
          applied: 5,
          unchanged: 0,
          refused: 0,
          reason: 'Spring campaign',
        }),
      }),
    ]);
    // An upload's apply is no single adjustment.
    expect((await audit()).some((entry) => entry.detail?.upload === id)).toBe(false);

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
    const stored = await runSql(
      t.app.get<DataSource>(getDataSourceToken()),
      'SELECT COUNT(*) AS n FROM points_upload_lines WHERE upload_id = ?',
      [first.id],
    );
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

  it('refuses an upload without a session before reading its body, as the pages do', async () => {
    const url = `${base}/dashboard/spaces/${ALPHA}/points/uploads`;
    const mb = 1024 * 1024;
    for (const headers of [{}, { cookie: 'lb_session=not-a-session' }] as Array<
      Record<string, string>
    >) {
      const answer = await postInPieces(url, headers, 20 * mb);
      expect(answer).toMatchObject({ status: 303, location: '/dashboard/sign-in' });
      expect(answer.setCookie.join()).toMatch(/lb_notice=session-ended/);
      // Answered while most of the body was still to come (what sockets buffer aside).
      expect(answer.sentBytes).toBeLessThan(answer.bodyBytes / 2);
    }
    // The same body from a signed-in editor is read whole, and refused for what it says.
    const signed = await postInPieces(url, { cookie: editor.client.cookieHeader() }, 2 * mb);
    expect(signed).toMatchObject({ status: 403, sentBytes: 2 * mb });
  });

  it("reads one upload a session at a time, and the session's next once the first is over", async () => {
    const url = new URL(`${base}/dashboard/spaces/${ALPHA}/points/uploads`);
    const slow = httpRequest(url, {
      method: 'POST',
      headers: {
        cookie: editor.client.cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '100000',
      },
    });
    slow.on('error', () => undefined);
    slow.write(`_csrf=${editor.csrf}&content=`);
    await sleep(300);
    const second = await upload(editor, { content: 'address,points\n0xBUSY,1', reason: 'Busy' });
    expect({ status: second.status, alert: alertOf(second.text) }).toEqual({
      status: 429,
      alert:
        'Another upload of yours is being sent or checked: wait until it is done, then send this one.',
    });
    // Another session is not held up.
    const operator = await signIn(OPERATOR);
    const other = await upload(operator, { content: 'address,points\n0xBUSY,1', reason: 'Busy' });
    expect(other.status).toBe(303);
    slow.destroy();
    let status = 0;
    for (let i = 0; i < 40 && status !== 303; i++) {
      await sleep(50);
      status = (await upload(editor, { content: 'address,points\n0xBUSY,2', reason: 'Busy' }))
        .status;
    }
    expect(status).toBe(303);
  });

  it('dates lines without a time when the upload is applied, on the board of that sprint', async () => {
    const now = Date.now();
    // Sprint 41 ends after the upload and before the apply; sprint 42 follows it.
    const end = Math.ceil((now + 2_000) / 1000) * 1000;
    await t.load([
      {
        type: 'sprint',
        id: 41,
        spaceId: ALPHA,
        name: 'S41',
        startTime: iso(now - 3_600_000),
        endTime: iso(end),
      },
      {
        type: 'sprint',
        id: 42,
        spaceId: ALPHA,
        name: 'S42',
        startTime: iso(end),
        endTime: iso(end + 86_400_000),
      },
    ]);
    const file = 'address,points,occurredAt\n0xLATE,9,\n0xEARLY,4,' + iso(now - 60_000);
    const first = await preview(file, 'Sprint dating');
    expect(Date.now()).toBeLessThan(end);
    expect(linesTimeOf(first.page)).toBe('When the upload is applied');
    expect(first.page).toMatch(/0xLATE<\/code><\/td>[^]*?<td data-label="Time">When applied<\/td>/);
    await sleep(end - Date.now() + 100);
    const applied = await applyUpload(first.path);
    expect(statusOf(applied.text)).toMatch(/: 2 applied, 0 already applied, 0 refused\.$/);
    const appliedAt = linesTimeOf(applied.text) as number;
    expect(appliedAt).toBeGreaterThanOrEqual(end);
    expect({
      late: [await sprintPointsOf('0xLATE', 41), await sprintPointsOf('0xLATE', 42)],
      early: [await sprintPointsOf('0xEARLY', 41), await sprintPointsOf('0xEARLY', 42)],
    }).toEqual({ late: [undefined, 9], early: [4, undefined] });
    // Stored with the upload: an apply taken up again uses the same time.
    await sql("UPDATE points_uploads SET status = 'stopped' WHERE id = ?", [first.id]);
    const resumed = await applyUpload(first.path);
    expect(statusOf(resumed.text)).toMatch(/: 0 applied, 2 already applied, 0 refused\.$/);
    expect(linesTimeOf(resumed.text)).toBe(appliedAt);

    // The same file uploaded again later: its lines take the time of the earlier apply.
    await sleep(20);
    const again = await preview(file, 'Sprint dating');
    expect(linesTimeOf(again.page)).toBe('When the upload is applied');
    const reapplied = await applyUpload(again.path);
    expect(statusOf(reapplied.text)).toMatch(/: 0 applied, 2 already applied, 0 refused\.$/);
    expect(linesTimeOf(reapplied.text)).toBe(appliedAt);
    expect(await sprintPointsOf('0xLATE', 42)).toBe(9);
    expect(await pointsOf('0xLATE')).toBe(9);
  });

  it('refuses to apply an upload whose lines are gone as expired, applying nothing', async () => {
    const { id, path } = await preview('address,points\n0xGONE,5', 'Gone');
    // What an expiry that raced this apply left before the fix: the lines, and no mark.
    await sql('DELETE FROM points_upload_lines WHERE upload_id = ?', [id]);
    const refused = await applyUpload(path);
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toBe(
      'This upload expired and its lines are no longer kept: upload the file again',
    );
    expect(refused.text).not.toContain('data-points-apply');
    expect(await pointsOf('0xGONE')).toBeUndefined();
    const [row] = await sql('SELECT status, expired_at AS e FROM points_uploads WHERE id = ?', [
      id,
    ]);
    expect(row.status).not.toBe('applied');
    expect(row.e).not.toBeNull();
    expect((await audit('points.upload')).some((entry) => entry.detail?.upload === id)).toBe(false);
  });

  it('applies an upload whole or not at all when the next upload expires it meanwhile', async () => {
    const service = t.app.get(PointsUploads);
    const lines = (service as unknown as { lines: Repository<PointsUploadLineEntity> }).lines;
    const ingest = t.app.get(IngestService);
    /** The target and KEPT_UPLOADS - 1 newer ones: the next upload pushes it out. */
    const lastKept = async (name: string, count: number) => {
      const file = [
        'address,points',
        ...Array.from({ length: count }, (_, i) => `0x${name}${i},1`),
      ].join('\n');
      const target = await preview(file, name);
      for (let i = 1; i < KEPT_UPLOADS; i++)
        await preview(`address,points\n0x${name}FILL${i},1`, 'Fill');
      return { ...target, sha: normaliseUpload(file, ALPHA).sha256.slice(0, 32) };
    };
    const push = (name: string) =>
      upload(editor, { content: `address,points\n0x${name}PUSH,1`, reason: 'Push' });
    const stateOf = async (target: { id: string; sha: string }) => {
      const [row] = await sql(
        'SELECT status, applied_count AS a, expired_at AS e FROM points_uploads WHERE id = ?',
        [target.id],
      );
      const inLedger = (await ledger()).filter((entry) =>
        entry.key.startsWith(`upload:${target.sha}:`),
      );
      return {
        status: row.status,
        applied: row.a === null ? null : Number(row.a),
        expired: row.e !== null,
        inLedger: inLedger.length,
      };
    };

    // The apply is sent while the expiry drops the target's lines: it finds it expired.
    const early = await lastKept('RACEA', 20);
    let applied: Awaited<ReturnType<typeof applyUpload>> | undefined;
    const drop = lines.delete.bind(lines);
    const dropping = jest.spyOn(lines, 'delete').mockImplementation(async (criteria) => {
      const result = await drop(criteria);
      if ((criteria as { uploadId?: string }).uploadId === early.id)
        applied = await applyUpload(early.path);
      return result;
    });
    try {
      expect((await push('RACEA')).status).toBe(303);
    } finally {
      dropping.mockRestore();
    }
    expect({ status: applied?.status, alert: alertOf(applied?.text ?? '') }).toEqual({
      status: 400,
      alert: 'This upload expired and its lines are no longer kept: upload the file again',
    });
    expect(await stateOf(early)).toEqual({
      status: 'ready',
      applied: null,
      expired: true,
      inLedger: 0,
    });

    // The next upload comes while the target's first part is being applied: it is left alone.
    const late = await lastKept('RACEB', 6_000);
    const applyParts = ingest.applyRecordsInParts.bind(ingest);
    let pushed: number | undefined;
    const applying = jest
      .spyOn(ingest, 'applyRecordsInParts')
      .mockImplementation(async (...args) => {
        if (pushed === undefined) pushed = (await push('RACEB')).status;
        return applyParts(...args);
      });
    try {
      const done = await applyUpload(late.path);
      expect(statusOf(done.text)).toMatch(/: 6,000 applied, 0 already applied, 0 refused\.$/);
    } finally {
      applying.mockRestore();
    }
    expect(pushed).toBe(303);
    expect(await stateOf(late)).toEqual({
      status: 'applied',
      applied: 6_000,
      expired: false,
      inLedger: 6_000,
    });
    // Expired by the upload after that one, once its apply is over.
    expect((await push('RACEC')).status).toBe(303);
    expect(await stateOf(late)).toMatchObject({ status: 'applied', expired: true });
  });

  it('expires an upload older than a week when it is read, with no new upload in its space', async () => {
    const { id, path } = await preview('address,points\n0xWEEK,5', 'Old');
    await sql('UPDATE points_uploads SET created_at = ? WHERE id = ?', [
      Date.now() - KEPT_UPLOAD_MS - 60_000,
      id,
    ]);
    const page = await editor.page(path);
    expect(statusOf(page.text)).toMatch(/^This upload expired/);
    expect(page.text).not.toContain('data-points-apply');
    const [stored] = await sql(
      'SELECT COUNT(*) AS n FROM points_upload_lines WHERE upload_id = ?',
      [id],
    );
    expect(Number(stored.n)).toBe(0);
  });
});
