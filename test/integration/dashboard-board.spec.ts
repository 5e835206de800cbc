import { DataSource } from 'typeorm';
import { ErrorCode } from '../../src/common/errors/error-code';
import { LoyaltyException } from '../../src/common/errors/loyalty.exception';
import { AdminsService } from '../../src/host/dashboard/accounts/admins.service';
import { MembersService } from '../../src/host/dashboard/accounts/members.service';
import type { SpaceRole } from '../../src/host/dashboard/accounts/roles';
import { BoardDistributions } from '../../src/host/dashboard/board-distributions';
import { LeaderboardsService } from '../../src/leaderboards/graphql/leaderboards.service';
import { RANK_BUCKETS } from '../../src/leaderboards/rank-buckets/rank-buckets';
import { RankIndexService } from '../../src/leaderboards/rank-index/rank-index.service';
import { BoardReader } from '../../src/leaderboards/read/board-reader';
import { SqlBoardReader } from '../../src/leaderboards/read/sql-board-reader';
import { SpacesService } from '../../src/spaces/spaces.service';
import { DashboardClient } from '../utils/dashboard-client';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp, TestApp } from '../utils/test-app';
import { runSql } from '../utils/sql';

const OPERATOR = 'operator@example.com';
const PASSWORD = 'correct horse battery staple';
const SPACE = 1;
const PRIVATE_SPACE = 2;
const SPRINT = 11;
const ENTRIES = 130;
/** Address i's all-time points: every address has its own total, so rank i + 1 is address i. */
const pointsOf = (i: number) => 100_000 - i * 7;
/** 42 characters, mixed case, as wallets write them. */
const addressOf = (i: number) => `0x${'Ab'.repeat(17)}${i.toString(16).padStart(6, '0')}`;
const IN_SPRINT = Date.parse('2026-11-05T10:00:00Z');
const BEFORE_SPRINT = Date.parse('2026-10-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** The address with more ledger entries than the address page lists on one page. */
const BUSY = ENTRIES - 1;
/** 103 ledger entries at one time, netting -1 point: on no board. */
const TIED = '0xtied';
const TIED_ENTRIES = 103;
/** An address no path can name: a browser resolves the segment '..' away. */
const DOTS = '..';

/** Addresses 0..129; the even ones earn their points inside the sprint, the odd ones before it. */
function fixture(): Array<Record<string, unknown>> {
  const records: Array<Record<string, unknown>> = [
    { type: 'space', id: SPACE, name: 'Board space' },
    { type: 'space', id: PRIVATE_SPACE, name: 'Hidden space' },
    {
      type: 'sprint',
      id: SPRINT,
      spaceId: SPACE,
      name: 'Sprint A',
      startTime: '2026-11-03T00:00:00Z',
      endTime: '2026-11-17T00:00:00Z',
    },
    {
      type: 'quest',
      id: 'early bird/1',
      spaceId: SPACE,
      name: 'Early bird',
      status: 'CapReached',
      questType: 'onchain',
      startTime: '2026-11-03T00:00:00Z',
      endTime: '2026-11-10T00:00:00Z',
      cap: 1500,
    },
    { type: 'quest', id: 'later', spaceId: SPACE, name: 'Later', status: 'NotStarted' },
    { type: 'quest', id: '.', spaceId: SPACE, name: 'One dot', status: 'Draft' },
    { type: 'quest', id: '..', spaceId: SPACE, name: 'Two dots', status: 'Draft' },
  ];
  for (let e = 0; e < TIED_ENTRIES; e++)
    records.push({
      type: 'points',
      key: `tie-${String(e).padStart(3, '0')}`,
      spaceId: SPACE,
      address: TIED,
      points: e < TIED_ENTRIES - 1 && e % 2 === 0 ? 1 : -1,
      occurredAt: iso(BEFORE_SPRINT),
    });
  records.push(
    {
      type: 'points',
      key: 'dots-1',
      spaceId: SPACE,
      address: DOTS,
      points: 3,
      occurredAt: iso(BEFORE_SPRINT),
    },
    {
      type: 'points',
      key: 'dots-2',
      spaceId: SPACE,
      address: DOTS,
      points: -4,
      occurredAt: iso(BEFORE_SPRINT + 1000),
    },
  );
  for (let i = 0; i < ENTRIES; i++) {
    const address = addressOf(i);
    const at = (i % 2 === 0 ? IN_SPRINT : BEFORE_SPRINT) + i * 60_000;
    if (i % 3 === 0) records.push({ type: 'profile', address, username: `player_${i}` });
    if (i === 0) {
      records.push(
        {
          type: 'points',
          key: 'grant-1',
          spaceId: SPACE,
          address,
          points: 60_000,
          occurredAt: iso(at),
          reason: 'launch bonus',
        },
        {
          type: 'points',
          key: 'grant-2',
          spaceId: SPACE,
          address,
          points: 40_010,
          occurredAt: iso(at + 3_600_000),
          reason: 'quest reward',
        },
        {
          type: 'points',
          key: 'fix-1',
          spaceId: SPACE,
          address,
          points: -10,
          occurredAt: iso(at + 7_200_000),
        },
      );
    } else if (i === BUSY) {
      for (let e = 0; e < 104; e++)
        records.push({
          type: 'points',
          key: `many-${e}`,
          spaceId: SPACE,
          address,
          points: 1,
          occurredAt: iso(at + e * 1000),
        });
      records.push({
        type: 'points',
        key: 'many-rest',
        spaceId: SPACE,
        address,
        points: pointsOf(i) - 104,
        occurredAt: iso(at - 1000),
      });
    } else {
      records.push({
        type: 'points',
        key: `p-${i}`,
        spaceId: SPACE,
        address,
        points: pointsOf(i),
        occurredAt: iso(at),
      });
    }
  }
  for (let i = 0; i < 3; i++)
    records.push({
      type: 'points',
      key: `hidden-${i}`,
      spaceId: PRIVATE_SPACE,
      address: `0xhidden${i}`,
      points: 10 + i,
      occurredAt: iso(IN_SPRINT),
    });
  return records;
}

/** A row of the board table as a person reads it. */
interface Row {
  rank: string;
  address: string;
  points: string;
  current: boolean;
}

function boardRows(page: string): Row[] {
  const table = /<table class="board">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
  return [...table.matchAll(/<tr\s+id="rank-(\d+)"([^>]*)>([\s\S]*?)<\/tr>/g)].map((m) => ({
    rank: /<td data-label="Rank" class="rank">([^<]*)<\/td>/.exec(m[3])![1],
    address: /title="([^"]+)"/.exec(m[3])![1],
    points: /<td data-label="Points" class="num">([^<]*)<\/td>/.exec(m[3])![1],
    current: /class="current" aria-current="true"/.test(m[2]),
  }));
}

const text = (fragment: string) =>
  fragment
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
const alertOf = (page: string) => /role="alert">([^<]*)</.exec(page)?.[1];
const noticeOf = (page: string) => {
  const m = /role="status">([\s\S]*?)<\/p>/.exec(page);
  return m ? text(m[1]) : undefined;
};
const rangeOf = (page: string) => /<p class="range">([^<]*)<\/p>/.exec(page)?.[1];
/** The pager's links by their text, and the labels it shows without a link. */
function pagerOf(page: string) {
  const nav = /<nav class="pager"[^>]*>([\s\S]*?)<\/nav>/.exec(page)?.[1] ?? '';
  const links = Object.fromEntries(
    [...nav.matchAll(/<a href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].map((m) => [
      m[2].trim(),
      m[1].replace(/&amp;/g, '&'),
    ]),
  );
  const idle = [...nav.matchAll(/<span class="idle">([^<]+)<\/span>/g)].map((m) => m[1]);
  return { links, idle, where: text(/<li class="where">([^<]*)<\/li>/.exec(nav)?.[1] ?? '') };
}
const expectedPoints = (i: number) => pointsOf(i).toLocaleString('en-US');

describe.each(DB_KINDS)('the board pages on %s', (kind) => {
  let t: TestApp;
  let base: string;
  let operatorId: string;
  let operator: DashboardClient;

  const signIn = async (email: string) => {
    const client = new DashboardClient(base);
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return client;
  };
  const member = async (email: string, spaceId: number, role: SpaceRole) => {
    const members = t.app.get(MembersService);
    const { path } = await members.invite(spaceId, email, role, operatorId);
    await members.accept(path.split('/').pop()!, { name: email, password: PASSWORD });
    return signIn(email);
  };
  const page = (client: DashboardClient, path: string) => client.request(path);

  beforeAll(async () => {
    t = await startTestApp(kind);
    base = t.url.replace('/query', '');
    operatorId = (await t.app.get(AdminsService).create(OPERATOR, PASSWORD)).id;
    await t.load(fixture());
    await t.app.get(SpacesService).setPrivate(PRIVATE_SPACE, true);
    operator = await signIn(OPERATOR);
  });
  afterAll(() => t?.close());

  it('pages the board by rank offset, with its range, first, previous, next and last pages', async () => {
    const first = await page(operator, `/dashboard/spaces/${SPACE}`);
    expect(first.status).toBe(200);
    expect(rangeOf(first.text)).toBe('1–50 of 130');
    const rows = boardRows(first.text);
    expect(rows.map((r) => r.rank)).toEqual(Array.from({ length: 50 }, (_, i) => String(i + 1)));
    expect(rows[0]).toEqual({
      rank: '1',
      address: addressOf(0),
      points: '100,000',
      current: false,
    });
    expect(pagerOf(first.text)).toEqual({
      links: {
        'Next →': `/dashboard/spaces/${SPACE}?page=2`,
        Last: `/dashboard/spaces/${SPACE}?page=3`,
      },
      idle: ['First', '← Previous'],
      where: 'Page 1 of 3',
    });

    const second = await page(operator, `/dashboard/spaces/${SPACE}?page=2`);
    expect(rangeOf(second.text)).toBe('51–100 of 130');
    expect(boardRows(second.text).map((r) => [r.rank, r.address, r.points])).toEqual(
      Array.from({ length: 50 }, (_, i) => [
        String(51 + i),
        addressOf(50 + i),
        expectedPoints(50 + i),
      ]),
    );
    expect(pagerOf(second.text).links).toEqual({
      First: `/dashboard/spaces/${SPACE}?page=1`,
      '← Previous': `/dashboard/spaces/${SPACE}?page=1`,
      'Next →': `/dashboard/spaces/${SPACE}?page=3`,
      Last: `/dashboard/spaces/${SPACE}?page=3`,
    });

    const last = await page(operator, `/dashboard/spaces/${SPACE}?page=3`);
    expect(rangeOf(last.text)).toBe('101–130 of 130');
    expect(
      boardRows(last.text)
        .map((r) => r.rank)
        .slice(-1),
    ).toEqual(['130']);
    expect(pagerOf(last.text).idle).toEqual(['Next →', 'Last']);

    // The sprint's board: its own entries (the even addresses), the sprint kept in every link.
    const sprint = await page(operator, `/dashboard/spaces/${SPACE}?sprint=${SPRINT}&page=2`);
    expect(rangeOf(sprint.text)).toBe('51–65 of 65');
    expect(boardRows(sprint.text).map((r) => r.address)).toEqual(
      Array.from({ length: 15 }, (_, i) => addressOf(100 + i * 2)),
    );
    expect(pagerOf(sprint.text).links.First).toBe(
      `/dashboard/spaces/${SPACE}?sprint=${SPRINT}&page=1`,
    );

    for (const [query, message] of [
      ['page=4', 'There is no page 4: this board has 3 pages. Showing the first page.'],
      ['page=0', 'The page must be a whole number from 1. Showing the first page.'],
      ['page=two', 'The page must be a whole number from 1. Showing the first page.'],
      // Far past the last page: refused as such, before any offset is read.
      [
        'page=100000000000000',
        'There is no page 100,000,000,000,000: this board has 3 pages. Showing the first page.',
      ],
      [
        'address=0xnobody&page=100000000000000',
        'There is no page 100,000,000,000,000: this board has 3 pages. Showing the first page.',
      ],
    ]) {
      const refused = await page(operator, `/dashboard/spaces/${SPACE}?${query}`);
      expect({ query, status: refused.status, alert: alertOf(refused.text) }).toEqual({
        query,
        status: 400,
        alert: message,
      });
      expect(rangeOf(refused.text)).toBe('1–50 of 130');
    }
  });

  it('goes to the page holding a rank with that row highlighted, and refuses ranks off the board', async () => {
    const jump = await page(operator, `/dashboard/spaces/${SPACE}?rank=77`);
    expect(jump.status).toBe(200);
    expect(rangeOf(jump.text)).toBe('51–100 of 130');
    const highlighted = boardRows(jump.text).filter((r) => r.current);
    expect(highlighted).toEqual([
      { rank: '77', address: addressOf(76), points: expectedPoints(76), current: true },
    ]);
    expect(jump.text).toMatch(/<input\s+id="rank"[^>]*value="77"/);

    const last = await page(operator, `/dashboard/spaces/${SPACE}?sprint=${SPRINT}&rank=65`);
    expect(rangeOf(last.text)).toBe('51–65 of 65');
    expect(boardRows(last.text).find((r) => r.current)?.address).toBe(addressOf(128));

    for (const [query, message] of [
      [
        'rank=131',
        'There is no rank 131 on this board: its ranks go from 1 to 130. Showing the first page.',
      ],
      [
        'rank=0',
        'There is no rank 0 on this board: its ranks go from 1 to 130. Showing the first page.',
      ],
      ['rank=12x', 'Enter the rank as a whole number, such as 1200. Showing the first page.'],
      [
        'rank=100000000000000',
        'There is no rank 100,000,000,000,000 on this board: its ranks go from 1 to 130. Showing the first page.',
      ],
      [
        `sprint=${SPRINT}&rank=66`,
        'There is no rank 66 on this board: its ranks go from 1 to 65. Showing the first page.',
      ],
    ]) {
      const refused = await page(operator, `/dashboard/spaces/${SPACE}?${query}`);
      expect({ query, status: refused.status, alert: alertOf(refused.text) }).toEqual({
        query,
        status: 400,
        alert: message,
      });
      expect(rangeOf(refused.text)).toMatch(/^1–50 of/);
      expect(boardRows(refused.text).some((r) => r.current)).toBe(false);
    }
  });

  it('answers a selection it cannot read with 400, and an outage with its own status', async () => {
    const unknown = await page(operator, `/dashboard/spaces/${SPACE}?sprint=999`);
    expect({ status: unknown.status, alert: alertOf(unknown.text) }).toEqual({
      status: 400,
      alert:
        'Invalid sprint ID. Showing nothing for this selection; start again from the first page.',
    });
    const leaderboards = t.app.get(LeaderboardsService);
    const down = jest
      .spyOn(leaderboards, 'getPage')
      .mockRejectedValueOnce(new LoyaltyException(ErrorCode.SERVICE_UNAVAILABLE));
    try {
      const outage = await page(operator, `/dashboard/spaces/${SPACE}?page=2`);
      expect({ status: outage.status, alert: alertOf(outage.text) }).toEqual({
        status: 503,
        alert:
          'Service temporarily unavailable: the leaderboard could not be read. Try again in a moment.',
      });
      expect(rangeOf(outage.text)).toBeUndefined();
    } finally {
      down.mockRestore();
    }
  });

  it('finds an address on the page that holds it, whatever its case, and says when it is not on the board', async () => {
    const wanted = addressOf(88);
    const found = await page(
      operator,
      `/dashboard/spaces/${SPACE}?address=${encodeURIComponent(wanted.toLowerCase())}`,
    );
    expect(found.status).toBe(200);
    expect(rangeOf(found.text)).toBe('51–100 of 130');
    expect(boardRows(found.text).filter((r) => r.current)).toEqual([
      { rank: '89', address: wanted, points: expectedPoints(88), current: true },
    ]);
    expect(noticeOf(found.text)).toBe(
      `${wanted.toLowerCase()} is ranked 89 with ${expectedPoints(88)} points. Open its address page`,
    );
    expect(found.text).toContain(
      `href="/dashboard/spaces/${SPACE}/addresses/${wanted.toLowerCase()}"`,
    );

    // On the sprint's board, an odd address (points before the sprint) is not on it.
    const absent = await page(
      operator,
      `/dashboard/spaces/${SPACE}?sprint=${SPRINT}&address=${addressOf(3)}`,
    );
    expect(absent.status).toBe(200);
    expect(noticeOf(absent.text)).toBe(`${addressOf(3)} is not on this board.`);
    expect(rangeOf(absent.text)).toBe('1–50 of 65');
    const unknown = await page(operator, `/dashboard/spaces/${SPACE}?address=0xnobody`);
    expect(noticeOf(unknown.text)).toBe('0xnobody is not on this board.');
  });

  it('shows sprints with their dates, quests with their status in words, and edit links to those who may edit', async () => {
    const editor = await member('editor@example.com', SPACE, 'editor');
    const viewer = await member('viewer@example.com', SPACE, 'viewer');
    const edited = (await page(editor, `/dashboard/spaces/${SPACE}`)).text;
    expect(edited).toMatch(
      /<option\s+value="11"\s*>\s*Sprint A · 3 Nov – 16 Nov 2026\s*<\/option>/,
    );
    expect(edited).toContain('>Cap reached</span>');
    expect(edited).toContain('>Not started</span>');
    expect(text(/<table class="quests">([\s\S]*?)<\/table>/.exec(edited)![1])).toContain(
      'Early bird Cap reached onchain 3 Nov 2026 – 10 Nov 2026 1,500',
    );
    // Editors edit sprints and quests; the space itself (name, description) is its owners'.
    expect(edited).not.toContain(`href="/dashboard/spaces/${SPACE}/edit"`);
    const owned = (await page(operator, `/dashboard/spaces/${SPACE}`)).text;
    expect(owned).toContain(`href="/dashboard/spaces/${SPACE}/edit"`);
    for (const link of [
      `/dashboard/spaces/${SPACE}/sprints/${SPRINT}/edit`,
      `/dashboard/spaces/${SPACE}/quests/new`,
      `/dashboard/spaces/${SPACE}/quests/early%20bird%2F1/edit`,
    ])
      expect(edited).toContain(`href="${link}"`);
    // A browser (and fetch) resolves a path segment '.' or '..', even written %2E, before it
    // asks: such a quest's link names it in the query, where it reaches the server as it is.
    const editLinks = [
      ...edited.matchAll(
        /<a href="([^"]+)">Edit<span class="visually-hidden"> (One dot|Two dots)</g,
      ),
    ].map((m) => new URL(m[1].replace(/&amp;/g, '&'), base));
    expect(editLinks.map((url) => [url.pathname, url.searchParams.get('quest')])).toEqual([
      [`/dashboard/spaces/${SPACE}/quests/edit`, '.'],
      [`/dashboard/spaces/${SPACE}/quests/edit`, '..'],
    ]);
    // The link opens that quest's form, whose own action saves that quest.
    const twoDots = await page(editor, editLinks[1].pathname + editLinks[1].search);
    expect(twoDots.status).toBe(200);
    expect(twoDots.text).toMatch(/id="quest-name"[^>]*value="Two dots"/);
    const action = /<main[\s\S]*<form[^>]*method="post"[^>]*action="([^"]+)"/.exec(
      twoDots.text,
    )![1];
    expect(action.replace(/&amp;/g, '&')).toBe(`/dashboard/spaces/${SPACE}/quests/edit?quest=..`);
    const viewed = (await page(viewer, `/dashboard/spaces/${SPACE}`)).text;
    expect(viewed).toContain('Sprint A · 3 Nov – 16 Nov 2026');
    expect(viewed).not.toMatch(/\/(edit|new)"/);
  });

  it('draws the points distribution and the top ten as SVG with their numbers as tables', async () => {
    const board = (await page(operator, `/dashboard/spaces/${SPACE}`)).text;
    expect(board).toMatch(
      /<svg[^>]*role="img"[^>]*aria-labelledby="distribution-title distribution-desc"/,
    );
    expect(board).toContain('<title id="distribution-title">Points distribution</title>');
    const distribution = [
      ...board.matchAll(/<td data-label="Entries" class="num">([\d,]+)<\/td>/g),
    ];
    expect(distribution.reduce((sum, m) => sum + Number(m[1].replace(/,/g, '')), 0)).toBe(ENTRIES);
    const desc = /<desc id="distribution-desc">([^<]*)<\/desc>/.exec(board)![1];
    expect(desc).toMatch(/^130 entries with [\d,]+–[\d,]+ points, in \d+ ranges of equal width/);
    expect(board).toContain('<title id="top-title">Top 10 entries</title>');
    expect(board).toMatch(
      /<desc id="top-desc">The 10 highest entries, from 100,000 points \(player_0\)/,
    );
    // Deep pages chart the same board: its top ten, not the page's.
    const deep = (await page(operator, `/dashboard/spaces/${SPACE}?page=3`)).text;
    expect(/<desc id="top-desc">([^<]*)</.exec(deep)![1]).toBe(
      /<desc id="top-desc">([^<]*)</.exec(board)![1],
    );
  });

  it("shows an address's points and rank on every board and its ledger, newest first", async () => {
    const top = await page(
      operator,
      `/dashboard/spaces/${SPACE}/addresses/${addressOf(0).toLowerCase()}`,
    );
    expect(top.status).toBe(200);
    expect(text(/<h1[^>]*>([\s\S]*?)<\/h1>/.exec(top.text)![1])).toBe(`player_0 ${addressOf(0)}`);
    const standings = /<table class="standings">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(
      top.text,
    )![1];
    expect([...standings.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => text(m[1]))).toEqual([
      'All time Every event 1 100,000 Show on the All time board',
      'Sprint A 3 Nov – 16 Nov 2026 1 100,000 Show on the Sprint A board',
    ]);
    const ledger = /<table class="ledger">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(top.text)![1];
    expect([...ledger.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => text(m[1]))).toEqual([
      '5 Nov 2026, 12:00:00 UTC -10 fix-1 No reason given',
      '5 Nov 2026, 11:00:00 UTC +40,010 grant-2 quest reward',
      '5 Nov 2026, 10:00:00 UTC +60,000 grant-1 launch bonus',
    ]);

    const odd = await page(operator, `/dashboard/spaces/${SPACE}/addresses/${addressOf(7)}`);
    const oddRows = /<table class="standings">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(
      odd.text,
    )![1];
    expect([...oddRows.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => text(m[1]))).toEqual([
      `All time Every event 8 ${expectedPoints(7)} Show on the All time board`,
      'Sprint A 3 Nov – 16 Nov 2026 Not on this board',
    ]);
    expect(odd.text).toContain(`href="/dashboard/spaces/${SPACE}?address=${addressOf(7)}"`);

    expect(pagerOf(top.text).links).toEqual({});

    const stranger = await page(operator, `/dashboard/spaces/${SPACE}/addresses/0xstranger`);
    expect(stranger.status).toBe(200);
    expect(stranger.text).toContain('No ledger entries for this address in this space.');
    expect(stranger.text.match(/Not on this board/g)).toHaveLength(2);

    const invalid = await page(
      operator,
      `/dashboard/spaces/${SPACE}/addresses/${encodeURIComponent('0x with spaces')}`,
    );
    expect(invalid.status).toBe(404);
    expect(alertOf(invalid.text)).toBe(
      'That is not an address: addresses are 1 to 128 printable characters without spaces.',
    );
    const outsider = await member('outsider@example.com', SPACE, 'viewer');
    const hidden = await page(outsider, `/dashboard/spaces/${PRIVATE_SPACE}/addresses/0xhidden1`);
    expect(hidden.status).toBe(404);
    expect(alertOf(hidden.text)).toBe('Space not found.');
  });

  it("pages an address's ledger 100 entries at a time, older and newer, ties by key", async () => {
    const keysOf = (html: string) =>
      [...html.matchAll(/<td data-label="Key"><code class="key">([^<]+)<\/code>/g)].map(
        (m) => m[1],
      );
    const busyPath = `/dashboard/spaces/${SPACE}/addresses/${addressOf(BUSY)}`;
    const newest = await page(operator, busyPath);
    expect(keysOf(newest.text)).toEqual(Array.from({ length: 100 }, (_, i) => `many-${103 - i}`));
    expect(pagerOf(newest.text)).toMatchObject({ idle: ['Newest', '← Newer entries'] });
    const olderHref = pagerOf(newest.text).links['Older entries →'];
    const oldest = Date.parse(iso((BUSY % 2 === 0 ? IN_SPRINT : BEFORE_SPRINT) + BUSY * 60_000));
    expect(olderHref).toBe(`${busyPath}?before=${oldest + 4000}%3Amany-4`);

    const older = await page(operator, olderHref);
    expect(older.status).toBe(200);
    expect(keysOf(older.text)).toEqual(['many-3', 'many-2', 'many-1', 'many-0', 'many-rest']);
    const olderPager = pagerOf(older.text);
    expect(olderPager.idle).toEqual(['Older entries →']);
    expect(olderPager.links.Newest).toBe(busyPath);
    const newer = await page(operator, olderPager.links['← Newer entries']);
    expect(keysOf(newer.text)).toEqual(keysOf(newest.text));
    expect(pagerOf(newer.text).idle).toEqual(['← Newer entries']);

    // 103 entries at one time: the page breaks between two keys of that time.
    const tiedPath = `/dashboard/spaces/${SPACE}/addresses/${TIED}`;
    const tied = await page(operator, tiedPath);
    const tiedKeys = Array.from(
      { length: TIED_ENTRIES },
      (_, i) => `tie-${String(TIED_ENTRIES - 1 - i).padStart(3, '0')}`,
    );
    expect(keysOf(tied.text)).toEqual(tiedKeys.slice(0, 100));
    expect(tied.text.match(/Not on this board/g)).toHaveLength(2);
    const tiedOlder = await page(operator, pagerOf(tied.text).links['Older entries →']);
    expect(keysOf(tiedOlder.text)).toEqual(tiedKeys.slice(100));
    const tiedNewer = await page(operator, pagerOf(tiedOlder.text).links['← Newer entries']);
    expect(keysOf(tiedNewer.text)).toEqual(tiedKeys.slice(0, 100));

    for (const query of ['before=nonsense', 'after=12%3A', 'before=1%3Aa&after=1%3Aa']) {
      const refused = await page(operator, `${busyPath}?${query}`);
      expect({ query, status: refused.status, alert: alertOf(refused.text) }).toEqual({
        query,
        status: 400,
        alert: 'That link to a page of the ledger cannot be read. Showing the newest entries.',
      });
      expect(keysOf(refused.text)[0]).toBe('many-103');
    }

    // An address no path can name is asked for in the query, and its pager keeps it there.
    const dots = await page(operator, `/dashboard/spaces/${SPACE}/addresses?address=..`);
    expect(dots.status).toBe(200);
    expect(text(/<h1[^>]*>([\s\S]*?)<\/h1>/.exec(dots.text)![1])).toBe('Address ..');
    expect(keysOf(dots.text)).toEqual(['dots-2', 'dots-1']);
  });

  it('reads the standings of an address on a space of many sprints in one statement', async () => {
    const MANY = 5;
    const day = (i: number) => iso(Date.parse('2026-11-03T00:00:00Z') + i * 86_400_000);
    await t.load([
      { type: 'space', id: MANY, name: 'Many sprints' },
      ...Array.from({ length: 40 }, (_, i) => ({
        type: 'sprint',
        id: 1000 + i,
        spaceId: MANY,
        name: `Day ${i + 1}`,
        startTime: day(i),
        endTime: day(i + 1),
      })),
      {
        type: 'points',
        key: 'many-a',
        spaceId: MANY,
        address: '0xmany',
        points: 7,
        occurredAt: day(2),
      },
      {
        type: 'points',
        key: 'many-b',
        spaceId: MANY,
        address: '0xother',
        points: 9,
        occurredAt: day(2),
      },
      {
        type: 'points',
        key: 'many-c',
        spaceId: MANY,
        address: '0xmany',
        points: 3,
        occurredAt: day(30),
      },
    ]);
    t.recorder.queries.length = 0;
    const shown = await page(operator, `/dashboard/spaces/${MANY}/addresses/0xMany`);
    expect(shown.status).toBe(200);
    const rows = /<table class="standings">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(shown.text)![1];
    const standings = [...rows.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => text(m[1]));
    expect(standings).toHaveLength(41);
    expect(standings.filter((row) => !row.endsWith('Not on this board'))).toEqual([
      'All time Every event 1 10 Show on the All time board',
      'Day 3 5 Nov 2026 2 7 Show on the Day 3 board',
      'Day 31 3 Dec 2026 1 3 Show on the Day 31 board',
    ]);
    // The address's entries on the 41 boards: one statement, not one per board.
    const entryReads = t.recorder.queries.filter((q) => /FROM board_entries WHERE/.test(q));
    expect(entryReads.filter((q) => /sprint_id IN \(/.test(q))).toHaveLength(1);
    expect(entryReads.filter((q) => !/sprint_id IN \(/.test(q)).length).toBeLessThanOrEqual(3);
  });

  it('streams the board as CSV to whoever sees the space, in rank order, never cached', async () => {
    const all = await operator.request(`/dashboard/spaces/${SPACE}/export.csv`);
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(all.headers.get('content-disposition')).toBe(
      `attachment; filename="space-${SPACE}-all-time.csv"`,
    );
    expect(all.headers.get('cache-control')).toBe('no-store');
    const lines = all.text.trimEnd().split('\n');
    expect(lines[0]).toBe('rank,address,username,points');
    expect(lines.slice(1)).toEqual(
      Array.from(
        { length: ENTRIES },
        (_, i) => `${i + 1},${addressOf(i)},${i % 3 === 0 ? `player_${i}` : ''},${pointsOf(i)}`,
      ),
    );

    const sprint = await operator.request(`/dashboard/spaces/${SPACE}/export.csv?sprint=${SPRINT}`);
    expect(sprint.headers.get('content-disposition')).toBe(
      `attachment; filename="space-${SPACE}-sprint-${SPRINT}.csv"`,
    );
    expect(
      sprint.text
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[1]),
    ).toEqual(Array.from({ length: 65 }, (_, i) => addressOf(i * 2)));
    const unknownSprint = await operator.request(
      `/dashboard/spaces/${SPACE}/export.csv?sprint=999`,
    );
    expect(unknownSprint.status).toBe(404);
    expect(alertOf(unknownSprint.text)).toBe('This space has no such sprint.');
    expect((await operator.request(`/dashboard/spaces/${SPACE}/export.csv?sprint=x`)).status).toBe(
      400,
    );

    // A private space: refused to an account that does not see it, given to one of its viewers.
    const outsider = await member('csv-outsider@example.com', SPACE, 'viewer');
    const refused = await outsider.request(`/dashboard/spaces/${PRIVATE_SPACE}/export.csv`);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-disposition')).toBeNull();
    expect(refused.text).not.toContain('0xhidden');
    expect((await outsider.request(`/dashboard/spaces/${SPACE}/export.csv`)).status).toBe(200);
    const insider = await member('csv-insider@example.com', PRIVATE_SPACE, 'viewer');
    const own = await insider.request(`/dashboard/spaces/${PRIVATE_SPACE}/export.csv`);
    expect(own.status).toBe(200);
    expect(own.text).toBe(
      'rank,address,username,points\n1,0xhidden2,,12\n2,0xhidden1,,11\n3,0xhidden0,,10\n',
    );

    const anonymous = await new DashboardClient(base).request(
      `/dashboard/spaces/${SPACE}/export.csv`,
    );
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toMatch(/^\/dashboard\/sign-in/);
  });
});

describe.each(DB_KINDS)('the points distribution chart on %s', (kind) => {
  const CHART_SPACE = 3;
  const BOARD = { spaceId: CHART_SPACE, sprintId: 0 };
  const T = '2026-11-05T10:00:00Z';
  const later = (seconds: number) => iso(Date.parse(T) + seconds * 1000);
  /**
   * Totals on the edges of the log-scale buckets 1, 2, 5, 10, 20, 50, 100, 200 and between them,
   * tied in points, in time and both; two reached before 1970 (times below 0); and two addresses
   * at 0 and below, which are not on the board.
   */
  const TOTALS: Array<[address: string, points: number, at: string]> = [
    ['0xc01', 1, T],
    ['0xc02', 1, T],
    ['0xc03', 2, T],
    ['0xc04', 5, later(1)],
    ['0xc05', 5, T],
    ['0xc06', 9, '1960-01-01T00:00:00Z'],
    ['0xc07', 10, '1960-06-01T00:00:00Z'],
    ['0xc08', 10, T],
    ['0xc09', 10, T],
    ['0xc10', 100, T],
    ['0xc11', 200, T],
    ['0xc12', 200, later(5)],
    ['0xnegative', -5, T],
  ];
  const EXPECTED = [
    ['1', '2'],
    ['2–4', '1'],
    ['5–9', '3'],
    ['10–19', '3'],
    ['20–49', '0'],
    ['50–99', '0'],
    ['100–199', '1'],
    ['200', '2'],
  ];
  let t: TestApp;
  let operator: DashboardClient;
  const savedSize = RANK_BUCKETS.size;

  beforeAll(async () => {
    // Buckets of two entries: the SQL reader counts through several of them.
    RANK_BUCKETS.size = 2;
    t = await startTestApp(kind);
    await t.app.get(AdminsService).create(OPERATOR, PASSWORD);
    await t.load([
      { type: 'space', id: CHART_SPACE, name: 'Chart space' },
      ...TOTALS.map(([address, points, at]) => ({
        type: 'points',
        key: `k-${address}`,
        spaceId: CHART_SPACE,
        address,
        points,
        occurredAt: at,
      })),
      {
        type: 'points',
        key: 'zero-1',
        spaceId: CHART_SPACE,
        address: '0xzero',
        points: 5,
        occurredAt: T,
      },
      {
        type: 'points',
        key: 'zero-2',
        spaceId: CHART_SPACE,
        address: '0xzero',
        points: -5,
        occurredAt: later(1),
      },
    ]);
    operator = new DashboardClient(t.url.replace('/query', ''));
    expect((await operator.signIn(OPERATOR, PASSWORD)).status).toBe(303);
  });
  afterAll(async () => {
    await t?.close();
    RANK_BUCKETS.size = savedSize;
  });

  /** The distribution's numbers as its table lists them: [points, entries]. */
  const chartRows = (page: string) => {
    const table = /<table class="chart-data">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
    return [
      ...table.matchAll(
        /<td data-label="Points">([^<]*)<\/td>\s*<td data-label="Entries" class="num">([^<]*)<\/td>/g,
      ),
    ].map((m) => [m[1], m[2]]);
  };

  it('keeps the board when the chart cannot be read, and says so', async () => {
    const reader = t.app.get(BoardReader);
    const failing = jest
      .spyOn(reader, 'countAhead')
      .mockRejectedValue(new Error('max_statement_time exceeded'));
    try {
      const page = await operator.request(`/dashboard/spaces/${CHART_SPACE}`);
      expect(page.status).toBe(200);
      expect(rangeOf(page.text)).toBe('1–12 of 12');
      expect(boardRows(page.text)).toHaveLength(12);
      expect(page.text).toContain(
        'The points distribution could not be read just now. Reload the page to try again.',
      );
      expect(page.text).not.toContain('id="distribution-title"');
      expect(page.text).toContain('<title id="top-title">Top 10 entries</title>');
    } finally {
      failing.mockRestore();
    }
  });

  it('counts the entries in each range of points: ties on the edges, none at 0 or below', async () => {
    const page = await operator.request(`/dashboard/spaces/${CHART_SPACE}`);
    expect(page.status).toBe(200);
    expect(chartRows(page.text)).toEqual(EXPECTED);
    const caption = /<figcaption>([\s\S]*?)<details>/.exec(page.text)![1];
    expect(text(caption)).toMatch(
      /^Points distribution ?: the board's 12 entries per range of points, as of \d\d:\d\d:\d\d UTC\. An address at 0 points or less is not on the board\.$/,
    );
    expect(rangeOf(page.text)).toBe('1–12 of 12');
  });

  it('reads the same counts from the rank buckets in SQL and from the rank index', async () => {
    const buckets: Array<{ n: number | string }> = await runSql(
      t.app.get(DataSource),
      'SELECT COUNT(*) AS n FROM board_rank_buckets WHERE space_id = ?',
      [CHART_SPACE],
    );
    expect(Number(buckets[0].n)).toBeGreaterThan(2);
    const counts = (d: { buckets: Array<{ from: number; to: number; entries: number }> }) =>
      d.buckets.map((b) => [b.from, b.to, b.entries]);
    const expected = [
      [1, 1, 2],
      [2, 4, 1],
      [5, 9, 3],
      [10, 19, 3],
      [20, 49, 0],
      [50, 99, 0],
      [100, 199, 1],
      [200, 200, 2],
    ];
    const sql = await new BoardDistributions(t.app.get(SqlBoardReader, { strict: false }), 0).of(
      BOARD,
    );
    expect({ scale: sql.scale, entries: sql.entries, counts: counts(sql) }).toEqual({
      scale: 'log',
      entries: 12,
      counts: expected,
    });
    await t.app.get(RankIndexService).warm(BOARD);
    const reader = t.app.get(BoardReader);
    const probe = jest.spyOn(t.app.get(SqlBoardReader, { strict: false }), 'countAhead');
    const indexed = await new BoardDistributions(reader, 0).of(BOARD);
    // Every count came from the index.
    expect(probe).not.toHaveBeenCalled();
    probe.mockRestore();
    expect({ entries: indexed.entries, counts: counts(indexed) }).toEqual({
      entries: 12,
      counts: expected,
    });
  });
});
