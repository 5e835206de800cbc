// The host test, the same file in every NestJS host fixture (kept once in test/hosts; the runner
// copies it into each host's test/ folder). It boots the host's own app on one database (SQLite,
// MariaDB or PostgreSQL, as a spec's useDatabase() picks), creates a token, sends records to
// POST /ingest as JSON and NDJSON, walks a leaderboard through the host's GraphQL path and exports
// it through GET /export, and checks the error envelope. Its boot starts two replicas of the app
// at once on the fresh database, as a deployment's instances would. Test names start with the
// step of the runner's table they prove: boot, cli, ingest, walk, errors. Jest and vitest both run
// it (describe/it/expect as globals).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { createConnection } from 'mysql2/promise';
// The default import: pg is CommonJS, and this file runs as CommonJS (jest) and as ESM (vitest).
import pg from 'pg';
import { AccessTokensService } from 'loyalty-leaderboard';

const MYSQL_SERVER = process.env.HOSTS_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const POSTGRES_SERVER = process.env.HOSTS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
const GRAPHQL_PATH = '/query';
const STEP_TIMEOUT = 120_000;
/** Opens the message of a test that could not run because an earlier one failed. */
const NOT_RUN = 'not run:';
const SPACE_ID = 1;
const ADDRESSES = 120; // three pages of 50
const IN_JSON = 70; // addresses sent as a JSON array; the rest as NDJSON

type Json = any;

interface Answer {
  status: number;
  body: Json;
  text: string;
}

/** The board the records below make: rank i + 1 is address i. */
function expectedBoard() {
  return Array.from({ length: ADDRESSES }, (_, i) => ({
    rank: i + 1,
    // Pairs tie on points; the one that reached its total first (the even one) ranks first.
    points: 1000 - 10 * Math.floor(i / 2),
    address: { address: addressOf(i), username: i % 3 === 0 ? null : `user-${i}` },
  }));
}

function addressOf(i: number): string {
  return `0xHost${String(i).padStart(3, '0')}`;
}

function occurredAt(i: number, dayBefore = false): string {
  const at = Date.parse('2026-03-02T00:00:00Z') + i * 60_000 - (dayBefore ? 86_400_000 : 0);
  return new Date(at).toISOString();
}

/** The records of addresses [from, to): profiles for two in three, points (two events for some). */
function recordsFor(from: number, to: number): Json[] {
  const records: Json[] = [];
  for (const entry of expectedBoard().slice(from, to)) {
    const i = entry.rank - 1;
    const address = entry.address.address;
    if (entry.address.username) {
      records.push({ type: 'profile', address, username: entry.address.username });
    }
    const points = (key: string, value: number, at: string) => ({
      type: 'points',
      key,
      spaceId: SPACE_ID,
      address,
      points: value,
      occurredAt: at,
    });
    if (i % 10 === 0) {
      records.push(points(`host-${i}-a`, entry.points - 5, occurredAt(i, true)));
      records.push(points(`host-${i}-b`, 5, occurredAt(i)));
    } else {
      records.push(points(`host-${i}`, entry.points, occurredAt(i)));
    }
  }
  return records;
}

/** The parts of an error answer the envelope fixes (docs/api.md, Errors), for one comparison. */
function envelopeOf(answer: Answer) {
  const error = answer.body?.errors?.[0];
  return {
    status: answer.status,
    errors: Array.isArray(answer.body?.errors) ? answer.body.errors.length : answer.text.slice(0, 300),
    message: error?.message,
    code: error?.extensions?.code,
    category: error?.extensions?.category,
    http_status: error?.extensions?.http_status,
    timestamp: !Number.isNaN(Date.parse(error?.extensions?.timestamp)),
  };
}

/** The envelope (as envelopeOf reads it) of a request without a token, and with an invalid one. */
const TOKEN_REQUIRED_401 = {
  status: 401,
  errors: 1,
  message: 'Access token is required',
  code: 'TOKEN_REQUIRED',
  category: 'AUTHENTICATION',
  http_status: 401,
  timestamp: true,
};
const INVALID_TOKEN_401 = { ...TOKEN_REQUIRED_401, message: 'Invalid access token', code: 'INVALID_TOKEN' };

type DatabaseKind = 'mariadb' | 'postgres' | 'sqlite';

/** The names the describe gives each database: the runner reads the one after " on ". */
const DATABASE_NAMES: Record<DatabaseKind, string> = {
  mariadb: 'MariaDB',
  postgres: 'PostgreSQL',
  sqlite: 'SQLite',
};

interface Database {
  fixture: string;
  kind: DatabaseKind;
  /** The MariaDB or PostgreSQL database the run creates and drops. */
  schema: string;
  /** A folder of the run's own: the SQLite file is made in it. */
  scratch: string;
  /**
   * What the README's snippet and the loyalty CLI read from DATABASE_URL:
   * `mysql://user@host:port/database`, `postgres://user@host:port/database` or
   * `sqlite:/path/to/file.sqlite`.
   */
  databaseUrl: string;
}

let chosen: Database | undefined;

/**
 * Sets process.env.DATABASE_URL for this test file. The README's snippet reads it when the app module is
 * evaluated, so a spec imports a module calling this before it imports the app module.
 */
export function useDatabase(kind: DatabaseKind): void {
  const fixture: string = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).name;
  const scratch = mkdtempSync(join(tmpdir(), `loyalty-host-${fixture}-`));
  const schema = `loyalty_host_${fixture.replace(/[^a-z0-9]/gi, '_')}`;
  const databaseUrl =
    kind === 'mariadb'
      ? `${MYSQL_SERVER}/${schema}`
      : kind === 'postgres'
        ? `${POSTGRES_SERVER}/${schema}`
        : `sqlite:${join(scratch, 'loyalty.sqlite')}`;
  chosen = { fixture, kind, schema, scratch, databaseUrl };
  process.env.DATABASE_URL = databaseUrl;
}

/**
 * Runs `body` on a connection to the server of `kind`, outside any of its databases; fails with
 * what to do when the server does not answer (a host test needs it, it never skips).
 */
async function onServer(
  kind: 'mariadb' | 'postgres',
  body: (query: (sql: string) => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const [server, variable] =
    kind === 'mariadb'
      ? [MYSQL_SERVER, 'HOSTS_MYSQL_URL']
      : [POSTGRES_SERVER, 'HOSTS_POSTGRES_URL'];
  let connection: { query(sql: string): Promise<unknown>; end(): Promise<void> };
  try {
    if (kind === 'mariadb') {
      connection = await createConnection(server);
    } else {
      // The maintenance database: the test's own is dropped and made from here.
      const client = new pg.Client({
        connectionString: `${server}/postgres`,
        connectionTimeoutMillis: 10_000, // mysql2's default: a silent host fails, never hangs
      });
      await client.connect();
      connection = client;
    }
  } catch (error) {
    const where = server.replace(/(\/\/[^:@/]*):[^@/]*@/, '$1:***@'); // no password in the message
    // Node's AggregateError (every address of a host refused) has an empty message of its own.
    const cause = error as { message?: string; code?: string; errors?: Error[] };
    const why = cause.message || cause.errors?.map((e) => e.message).join('; ') || cause.code;
    throw new Error(
      `${DATABASE_NAMES[kind]} is required by the host test but ${where} did not answer ` +
        `(${why || String(error)}); start it, or set ${variable} to its URL`,
    );
  }
  try {
    await body((sql) => connection.query(sql));
  } finally {
    await connection.end();
  }
}

/** The suite, on the database useDatabase chose; createApp creates the app as src/main.ts does. */
export function hostSuite(createApp: () => Promise<INestApplication>): void {
  if (!chosen || process.env.DATABASE_URL !== chosen.databaseUrl) {
    throw new Error('import a module calling useDatabase() before the app module');
  }
  const { fixture, kind: database, schema, scratch, databaseUrl } = chosen;

  let app: INestApplication | undefined;
  let base = '';
  let token = '';
  /** The addresses whose records an ingest test got applied: the board the walk expects. */
  const ingested = new Set<number>();

  const request = async (
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<Answer> => {
    const response = await fetch(base + path, { method: 'POST', headers, body });
    const text = await response.text();
    let parsed: Json;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  };
  const graphql = (query: string, variables: Json = {}, headers: Record<string, string> = {}) =>
    request(GRAPHQL_PATH, JSON.stringify({ query, variables }), {
      'content-type': 'application/json',
      ...headers,
    });
  const ingest = (body: string, contentType: string, headers: Record<string, string> = {}) =>
    request('/ingest', body, { 'content-type': contentType, ...headers });
  // A test that cannot run after an earlier one failed says so: the runner counts it as skipped.
  const booted = () => {
    if (!app) throw new Error(`${NOT_RUN} the host did not boot (see its boot test)`);
    if (!token) throw new Error(`${NOT_RUN} no access token (see the cli test)`);
  };

  // FORCE: a run that died may have left connections to the database open, which block its drop.
  const dropDatabase =
    database === 'mariadb'
      ? `DROP DATABASE IF EXISTS \`${schema}\``
      : `DROP DATABASE IF EXISTS "${schema}" WITH (FORCE)`;

  // Why the database could not be made: the boot test fails with it. Thrown by beforeAll, vitest
  // would mark the tests skipped and leave the error out of its JSON results.
  let serverError: unknown;

  describe(`${fixture} on ${DATABASE_NAMES[database]}`, () => {
    beforeAll(async () => {
      if (database === 'sqlite') return;
      try {
        await onServer(database, async (query) => {
          await query(dropDatabase);
          // As a host team would make it: the server's default character set and collation.
          await query(
            database === 'mariadb' ? `CREATE DATABASE \`${schema}\`` : `CREATE DATABASE "${schema}"`,
          );
        });
      } catch (error) {
        serverError = error;
      }
    }, STEP_TIMEOUT);

    afterAll(async () => {
      await app?.close();
      if (database !== 'sqlite' && !serverError) {
        await onServer(database, async (query) => {
          await query(dropDatabase);
        });
      }
      rmSync(scratch, { recursive: true, force: true });
    }, STEP_TIMEOUT);

    it(
      `boot: two replicas of the host's app module start together on a fresh ${database} ` +
        `database and serve GraphQL at ${GRAPHQL_PATH}`,
      async () => {
        if (serverError) throw serverError;
        // As two instances of a deployment would: each migrates under the module's lock, or waits.
        const [first, second] = await Promise.allSettled([createApp(), createApp()]);
        const replica = second.status === 'fulfilled' ? second.value : undefined;
        if (first.status === 'fulfilled') app = first.value;
        try {
          if (first.status === 'rejected') throw first.reason;
          if (second.status === 'rejected') throw second.reason;
          const answers = [];
          for (const created of [first.value, second.value]) {
            await created.listen(0, '127.0.0.1');
            const { port } = created.getHttpServer().address() as AddressInfo;
            base = `http://127.0.0.1:${port}`;
            const answer = await graphql('{ __typename }');
            answers.push({ status: answer.status, body: answer.body });
          }
          expect(answers).toEqual(
            [0, 1].map(() => ({ status: 200, body: { data: { __typename: 'Query' } } })),
          );
          // The suite goes on with the first; the second's address is forgotten with it.
          const { port } = first.value.getHttpServer().address() as AddressInfo;
          base = `http://127.0.0.1:${port}`;
        } finally {
          await replica?.close();
        }
      },
      STEP_TIMEOUT,
    );

    it(
      'cli: the loyalty binary in node_modules/.bin creates a token with the ingest and query scopes',
      async () => {
        if (!app) throw new Error(`${NOT_RUN} the host did not boot (see its boot test)`);
        const bin = join(process.cwd(), 'node_modules', '.bin', 'loyalty');
        const args = ['token', 'create', '--name', `host-${database}`, '--scope', 'ingest,query'];
        const run = await new Promise<{ code: unknown; stdout: string; stderr: string }>(
          (resolve) => {
            execFile(
              bin,
              args,
              { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
              (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
            );
          },
        );
        if (run.code === 0 && /^lpt_[0-9A-Za-z]{49}$/.test(run.stdout.trim())) {
          token = run.stdout.trim();
          return;
        }
        // The CLI failed: the rest of the suite goes on with a token from the library itself.
        const created = await app
          .get(AccessTokensService)
          .create(`host-${database}-fallback`, ['ingest', 'query']);
        token = created.token;
        throw new Error(
          `loyalty ${args.join(' ')} exited ${String(run.code)}; the other tests use a token from ` +
            `AccessTokensService instead.\nstdout: ${run.stdout.slice(0, 500)}\nstderr: ${run.stderr.slice(0, 2000)}`,
        );
      },
      STEP_TIMEOUT,
    );

    it(
      'ingest: POST /ingest applies a JSON array of records',
      async () => {
        booted();
        const records = [
          { type: 'space', id: SPACE_ID, name: 'Host space' },
          ...recordsFor(0, IN_JSON),
        ];
        const answer = await ingest(JSON.stringify(records), 'application/json', {
          'access-token': token,
        });
        expect({ status: answer.status, body: answer.body ?? answer.text }).toMatchObject({
          status: 200,
          body: { accepted: records.length, duplicates: 0, refused: 0 },
        });
        expect(answer.body.results).toHaveLength(records.length);
        for (let i = 0; i < IN_JSON; i++) ingested.add(i);
      },
      STEP_TIMEOUT,
    );

    it(
      'ingest: POST /ingest applies NDJSON, with a duplicate and a refused line',
      async () => {
        booted();
        const records = [
          ...recordsFor(IN_JSON, ADDRESSES),
          recordsFor(1, 2).find((r) => r.type === 'points'), // sent before: a duplicate
          {
            type: 'points',
            key: 'host-unknown-space',
            spaceId: 99,
            address: '0xNowhere',
            points: 5,
            occurredAt: occurredAt(0),
          },
        ];
        const body = records.map((r) => JSON.stringify(r)).join('\n') + '\n';
        const answer = await ingest(body, 'application/x-ndjson', { 'access-token': token });
        expect({ status: answer.status, body: answer.body ?? answer.text }).toMatchObject({
          status: 200,
          body: { accepted: records.length - 2, duplicates: 1, refused: 1 },
        });
        expect(answer.body.results.at(-2)).toEqual({ line: records.length - 1, status: 'duplicate' });
        expect(answer.body.results.at(-1)).toMatchObject({
          line: records.length,
          status: 'refused',
          field: 'spaceId',
        });
        for (let i = IN_JSON; i < ADDRESSES; i++) ingested.add(i);
      },
      STEP_TIMEOUT,
    );

    it(
      `walk: the board walked by cursor through ${GRAPHQL_PATH} has every entry once, in rank order`,
      async () => {
        booted();
        const query = `query Walk($space: Int!, $after: String) {
          space(id: $space) {
            name
            loyaltyPointsRanks(cursorAfter: $after) {
              totalCount
              pageInfo { hasNextPage endCursor }
              list { rank points address { address username } }
            }
          }
        }`;
        const entries: Json[] = [];
        const totals: number[] = [];
        let after: string | null = null;
        for (let pages = 0; pages < 10; pages++) {
          const answer = await graphql(query, { space: SPACE_ID, after }, { 'access-token': token });
          expect({ status: answer.status, errors: answer.body?.errors }).toEqual({
            status: 200,
            errors: undefined,
          });
          expect(answer.body.data.space.name).toBe('Host space');
          const page = answer.body.data.space.loyaltyPointsRanks;
          entries.push(...page.list);
          totals.push(page.totalCount);
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor;
        }
        // The board of what the ingest tests applied (all of it when both passed), ranks renumbered.
        const expected = expectedBoard()
          .filter((entry) => ingested.has(entry.rank - 1))
          .map((entry, index) => ({ ...entry, rank: index + 1 }));
        if (expected.length <= 50) {
          throw new Error(`${NOT_RUN} the ingest tests applied less than two pages`);
        }
        expect(totals).toEqual(Array(Math.ceil(expected.length / 50)).fill(expected.length));
        expect(entries).toEqual(expected);
      },
      STEP_TIMEOUT,
    );

    it(
      'walk: GET /export streams the same board whole, as of one moment, as NDJSON',
      async () => {
        booted();
        const response = await fetch(`${base}/export?spaceId=${SPACE_ID}&format=ndjson`, {
          headers: { 'access-token': token },
        });
        const text = await response.text();
        expect({ status: response.status, type: response.headers.get('content-type') }).toEqual({
          status: 200,
          type: 'application/x-ndjson',
        });
        const expected = expectedBoard()
          .filter((entry) => ingested.has(entry.rank - 1))
          .map((entry, index) => ({
            rank: index + 1,
            address: entry.address.address,
            username: entry.address.username,
            points: entry.points,
          }));
        if (expected.length === 0) throw new Error(`${NOT_RUN} the ingest tests applied nothing`);
        expect(Number(response.headers.get('x-board-entries'))).toBe(expected.length);
        expect(Number.isNaN(Date.parse(response.headers.get('x-board-as-of') ?? ''))).toBe(false);
        expect(
          text
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line)),
        ).toEqual(expected);
      },
      STEP_TIMEOUT,
    );

    const ingestBody = JSON.stringify(recordsFor(0, 1));

    it(
      'errors: POST /ingest without a token answers 401 TOKEN_REQUIRED in the envelope',
      async () => {
        booted();
        expect(envelopeOf(await ingest(ingestBody, 'application/json'))).toEqual(TOKEN_REQUIRED_401);
      },
      STEP_TIMEOUT,
    );

    it(
      'errors: POST /ingest with an invalid token answers 401 INVALID_TOKEN in the envelope',
      async () => {
        booted();
        const wrong = `lpt_${'x'.repeat(49)}`;
        const answer = await ingest(ingestBody, 'application/json', { 'access-token': wrong });
        expect(envelopeOf(answer)).toEqual(INVALID_TOKEN_401);
      },
      STEP_TIMEOUT,
    );

    it(
      'errors: POST /ingest with a JSON body that is not an array of records answers 400 MALFORMED_REQUEST',
      async () => {
        booted();
        const answer = await ingest('{"type":"space","id":2,"name":"not in an array"}', 'application/json', {
          'access-token': token,
        });
        expect(envelopeOf(answer)).toMatchObject({
          status: 400,
          errors: 1,
          code: 'MALFORMED_REQUEST',
          category: 'VALIDATION',
          http_status: 400,
          timestamp: true,
        });
      },
      STEP_TIMEOUT,
    );

    it(
      'errors: POST /ingest with a body that is not JSON answers 400 in the envelope',
      async () => {
        booted();
        const answer = await ingest('[{"type": "space", ', 'application/json', {
          'access-token': token,
        });
        expect(envelopeOf(answer)).toMatchObject({
          status: 400,
          errors: 1,
          category: 'VALIDATION',
          http_status: 400,
          timestamp: true,
        });
      },
      STEP_TIMEOUT,
    );

    it(
      `errors: ${GRAPHQL_PATH} without a token, or with an invalid one, answers 401 in the envelope`,
      async () => {
        booted();
        const query = `{ space(id: ${SPACE_ID}) { name } }`;
        expect(envelopeOf(await graphql(query))).toEqual(TOKEN_REQUIRED_401);
        const wrong = await graphql(query, {}, { 'access-token': `lpt_${'x'.repeat(49)}` });
        expect(envelopeOf(wrong)).toEqual(INVALID_TOKEN_401);
      },
      STEP_TIMEOUT,
    );
  });
}
