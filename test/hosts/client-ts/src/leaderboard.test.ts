// Walks a board of the service scripts/test-hosts.js runs (LOYALTY_ENDPOINT, LOYALTY_TOKEN,
// LOYALTY_SPACE) with the client alone, typed by its "require" declarations (this project is
// CommonJS). Test names start with the runner's step.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { createClient, LoyaltyApiError } from 'loyalty-leaderboard-client';
import type { Entry, LoyaltyClient, Page } from 'loyalty-leaderboard-client';

const endpoint = process.env.LOYALTY_ENDPOINT ?? 'http://127.0.0.1:3000/query';
const token = process.env.LOYALTY_TOKEN ?? '';
const spaceId = Number(process.env.LOYALTY_SPACE ?? 1);
const SERVER_SIDE = /^(@nestjs\/.*|typeorm|graphql|better-sqlite3|mysql2)$/;

interface LsNode {
  dependencies?: Record<string, LsNode>;
}

/** Every package name in `npm ls --all`'s tree. */
function installedPackages(): Set<string> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the runner's test reporters are for this process only
  const tree = JSON.parse(
    execFileSync('npm', ['ls', '--all', '--json'], { encoding: 'utf8', env }),
  ) as LsNode;
  const names = new Set<string>();
  const visit = (deps: Record<string, LsNode> = {}) => {
    for (const [name, node] of Object.entries(deps)) {
      names.add(name);
      visit(node.dependencies);
    }
  };
  visit(tree.dependencies);
  return names;
}

async function expectApiError(
  call: Promise<unknown>,
  code: string,
  httpStatus?: number,
): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof LoyaltyApiError, `a LoyaltyApiError (got ${String(error)})`);
    assert.equal(error.code, code);
    if (httpStatus !== undefined) assert.equal(error.details.httpStatus, httpStatus);
    return true;
  });
}

test('install: npm ls --all shows the client and no NestJS, TypeORM, GraphQL or database driver', () => {
  const names = installedPackages();
  assert.ok(names.has('loyalty-leaderboard-client'), 'loyalty-leaderboard-client is installed');
  assert.deepEqual(
    [...names].filter((name) => SERVER_SIDE.test(name)),
    [],
  );
});

test('walk: the client walks a board by cursor, every entry once, in rank order', async () => {
  const client: LoyaltyClient = createClient({ endpoint, token, pageDelayMs: [0, 0] });
  const pages: Page[] = [];
  for await (const page of client.leaderboard(spaceId, { pageSize: 100 }).pages()) pages.push(page);
  const entries: Entry[] = pages.flatMap((page) => page.list);
  assert.ok(pages.length > 1, `more than one page (got ${pages.length})`);
  assert.equal(entries.length, pages[0].totalCount);
  assert.deepEqual(
    entries.map((entry) => entry.rank),
    entries.map((_, index) => index + 1),
  );
  for (let i = 1; i < entries.length; i++) {
    assert.ok(entries[i].points <= entries[i - 1].points, `points never rise (rank ${i + 1})`);
  }
  const addresses = entries.map((entry) => entry.address?.address.toLowerCase());
  assert.equal(new Set(addresses).size, entries.length, 'each address once');
});

test('errors: an invalid token is a LoyaltyApiError INVALID_TOKEN with HTTP 401', async () => {
  const client = createClient({ endpoint, token: `lpt_${'x'.repeat(49)}`, retry: { maxRetries: 0 } });
  await expectApiError(client.space(spaceId), 'INVALID_TOKEN', 401);
});

test('errors: an unknown space is a LoyaltyApiError SPACE_NOT_FOUND', async () => {
  const client = createClient({ endpoint, token, retry: { maxRetries: 0 } });
  await expectApiError(client.space(2_000_000_000), 'SPACE_NOT_FOUND');
});
