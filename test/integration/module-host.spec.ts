import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { DynamicModule, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Args, GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AccessTokensService,
  IngestService,
  LOYALTY_MIGRATIONS,
  LoyaltyModule,
  SpacesService,
} from '../../src';
import { parseRecord } from '../../src/records/ingest-record';
import { BoardExportService } from '../../src/export/board-export.service';
import {
  createTestDatabase,
  DB_KINDS,
  DbKind,
  hostConnection,
  TestDatabase,
} from '../utils/test-databases';

/** A resolver of the host's own, beside the module's. */
@Resolver()
class GreetingResolver {
  constructor(private readonly spaces: SpacesService) {}

  @Query(() => String)
  async greeting(@Args('spaceId') spaceId: number): Promise<string> {
    const space = await this.spaces.findSpace(spaceId);
    return `Welcome to ${space?.name ?? 'nowhere'}`;
  }
}

type Platform = 'express' | 'fastify';

const MAX_RECORDS = 5;
/** What each platform's defaults let through: Fastify's bodyLimit; the module's own on Express. */
const NDJSON_LIMIT: Record<Platform, number> = { fastify: 1_048_576, express: 16 * 1_048_576 };

/**
 * A host wired as the README shows, and nothing of ours beyond it: no exception filter, no body
 * parser, no hook. Only the GraphQL context differs by platform, as the README says.
 */
@Module({})
class HostModule {
  static on(platform: Platform, database: TestDatabase): DynamicModule {
    const typeorm: TypeOrmModuleOptions = hostConnection(database);
    return {
      module: HostModule,
      imports: [
        TypeOrmModule.forRoot({
          ...typeorm,
          autoLoadEntities: true,
          migrations: LOYALTY_MIGRATIONS,
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: ApolloDriver,
          path: '/graphql',
          autoSchemaFile: true,
          ...(platform === 'fastify'
            ? { context: (req: unknown, reply: unknown) => ({ req, reply }) }
            : {}),
        }),
        LoyaltyModule.forRootAsync({
          useFactory: () => ({
            cursorSecret: 'host-secret-host-secret-host-secret-0001',
            ingestMaxRecords: MAX_RECORDS,
            migrationsRun: true,
          }),
        }),
      ],
      providers: [GreetingResolver],
    };
  }
}

const points = (key: string, address: string, value: number) => ({
  type: 'points',
  key,
  spaceId: 1,
  address,
  points: value,
  occurredAt: '2026-01-02T00:00:00Z',
});

/** The envelope of docs/api.md for one error, as an HTTP route answers it. */
const envelope = (code: string, message: string, category: string, httpStatus: number) => ({
  errors: [
    {
      message,
      extensions: {
        code,
        category,
        http_status: httpStatus,
        request_id: expect.stringMatching(/\S/),
        timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    },
  ],
});

const NOT_RECORDS =
  'The body must be a JSON array of records (application/json) or one record per line (application/x-ndjson)';
const NOT_JSON = 'Request body is not valid JSON';
const WRONG_TYPE =
  'Content-Type must be application/json (an array of records) or application/x-ndjson';

const CASES = (['express', 'fastify'] as const).flatMap((platform) =>
  DB_KINDS.map((kind) => [platform, kind] as [Platform, DbKind]),
);

describe.each(CASES)('the module inside a %s host on %s', (platform, kind) => {
  let database: TestDatabase;
  let app: INestApplication;
  let base: string;
  let queryToken: string;
  let ingestToken: string;

  const gql = async (query: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data: any; errors: Array<Record<string, any>> };
  };

  const ingest = async (
    body: string,
    contentType: string | null = 'application/json',
    token: string | null = ingestToken,
  ) => {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['content-type'] = contentType;
    if (token !== null) headers['access-token'] = token;
    const response = await fetch(`${base}/ingest`, { method: 'POST', headers, body });
    const text = await response.text();
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      body: JSON.parse(text),
    };
  };

  /** Space 1's all-time board, whole (it stays far below a page). */
  const board = async () => {
    const body = await gql(
      '{ space(id: 1) { loyaltyPointsRanks(first: 100) { totalCount list { rank points address { address } } } } }',
      { 'access-token': queryToken },
    );
    expect(body.errors).toBeUndefined();
    return body.data.space.loyaltyPointsRanks as {
      totalCount: number;
      list: Array<{ rank: number; points: number; address: { address: string } }>;
    };
  };
  const pointsOf = async (address: string) =>
    (await board()).list.find((entry) => entry.address.address === address)?.points;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    app = await NestFactory.create(
      HostModule.on(platform, database),
      platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false },
    );
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    const tokens = app.get(AccessTokensService);
    queryToken = (await tokens.create('host')).token;
    ingestToken = (await tokens.create('host-ingest', ['ingest'])).token;
    const records = [{ type: 'space', id: 1, name: 'Host space' }, points('h1', '0xH', 3)].map(
      (r) => {
        const parsed = parseRecord(r);
        if (!parsed.ok) throw new Error(parsed.reason);
        return parsed.record;
      },
    );
    await app.get(IngestService).applyRecords(records);
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it("serves the module's queries next to the host's own resolver, which uses a module service", async () => {
    const body = await gql(
      '{ greeting(spaceId: 1) space(id: 1) { name loyaltyPointsRanks { totalCount list { rank points } } } }',
      { 'access-token': queryToken },
    );
    expect(body).toEqual({
      data: {
        greeting: 'Welcome to Host space',
        space: {
          name: 'Host space',
          loyaltyPointsRanks: { totalCount: 1, list: [{ rank: 1, points: 3 }] },
        },
      },
    });
  });

  it("guards the module's resolvers without guarding the host's", async () => {
    const body = await gql('{ greeting(spaceId: 1) space(id: 1) { name } }');
    expect(body.data).toEqual({ greeting: 'Welcome to Host space', space: null });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({
      message: 'Access token is required',
      path: ['space'],
      extensions: { code: 'TOKEN_REQUIRED', category: 'AUTHENTICATION', http_status: 401 },
    });
  });

  // Without the module, Fastify refuses a media type it has no parser for (415) and Apollo on
  // Express finds no JSON body (400); the module's NDJSON parser must not change that.
  it("leaves the host's other routes as they were for NDJSON bodies", async () => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'access-token': queryToken },
      body: '{"query":"{ __typename }"}\n',
    });
    expect(response.status).toBe(platform === 'fastify' ? 415 : 400);
  });

  describe('POST /ingest', () => {
    it('takes a JSON array of records and answers each outcome by position', async () => {
      const answer = await ingest(
        JSON.stringify([
          points('json-1', '0xJson', 7),
          { ...points('json-2', '0xJson', 1), spaceId: 99 },
          points('json-1', '0xJson', 7),
        ]),
      );
      expect(answer).toEqual({
        status: 200,
        type: expect.stringMatching(/^application\/json/),
        body: {
          accepted: 1,
          duplicates: 1,
          refused: 1,
          results: [
            { line: 1, status: 'accepted' },
            {
              line: 2,
              status: 'refused',
              field: 'spaceId',
              reason: 'spaceId unknown space 99',
            },
            { line: 3, status: 'duplicate' },
          ],
        },
      });
      expect(await pointsOf('0xJson')).toBe(7);
    });

    it.each(['application/x-ndjson', 'application/ndjson; charset=utf-8'])(
      'takes NDJSON as %s, numbering lines as import does',
      async (contentType) => {
        const address = `0xNd${contentType.length}`;
        const ndjson = [
          JSON.stringify(points(`${address}-1`, address, 4)),
          '',
          '{"type":"points",',
          JSON.stringify(points(`${address}-2`, address, 5)),
        ].join('\n');
        const answer = await ingest(ndjson, contentType);
        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ accepted: 2, duplicates: 0, refused: 1 });
        expect(answer.body.results.map((r: any) => [r.line, r.status])).toEqual([
          [1, 'accepted'],
          [3, 'refused'],
          [4, 'accepted'],
        ]);
        expect(await pointsOf(address)).toBe(9);
      },
    );

    it('takes an NDJSON body sent in chunks, without a length', async () => {
      const lines = Array.from({ length: MAX_RECORDS }, (_, i) =>
        JSON.stringify(points(`chunk-${i}`, '0xChunk', 1)),
      );
      const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const request = httpRequest(`${base}/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson', 'access-token': ingestToken },
        });
        request.on('error', reject);
        request.on('response', (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode!, body: JSON.parse(text) }),
          );
        });
        // Each write is a chunk of its own: a record split across two of them still parses.
        for (const line of lines) {
          request.write(line.slice(0, 10));
          request.write(`${line.slice(10)}\n`);
        }
        request.end();
      });
      expect(answer).toEqual({
        status: 200,
        body: expect.objectContaining({ accepted: MAX_RECORDS, refused: 0 }),
      });
      expect(await pointsOf('0xChunk')).toBe(MAX_RECORDS);
    });

    it('refuses a request without a token with 401 in the error envelope', async () => {
      for (const [body, type] of [
        [JSON.stringify([points('nt-1', '0xNoToken', 1)]), 'application/json'],
        [JSON.stringify(points('nt-2', '0xNoToken', 1)), 'application/x-ndjson'],
      ]) {
        const answer = await ingest(body, type, null);
        expect(answer).toEqual({
          status: 401,
          type: expect.stringMatching(/^application\/json/),
          body: envelope('TOKEN_REQUIRED', 'Access token is required', 'AUTHENTICATION', 401),
        });
      }
      expect(await pointsOf('0xNoToken')).toBeUndefined();
    });

    it('refuses an invalid token with 401, a token without the ingest scope with 403', async () => {
      const body = JSON.stringify([points('bt-1', '0xBadToken', 1)]);
      const unknown = `lpt_${'0'.repeat(49)}`;
      // The real token with its last character changed (to one it does not already end with).
      const altered = `${ingestToken.slice(0, -1)}${ingestToken.endsWith('x') ? 'y' : 'x'}`;
      for (const token of ['not-a-token', unknown, altered]) {
        expect(await ingest(body, 'application/json', token)).toEqual({
          status: 401,
          type: expect.stringMatching(/^application\/json/),
          body: envelope('INVALID_TOKEN', 'Invalid access token', 'AUTHENTICATION', 401),
        });
      }
      expect(await ingest(body, 'application/json', queryToken)).toEqual({
        status: 403,
        type: expect.stringMatching(/^application\/json/),
        body: envelope(
          'INSUFFICIENT_SCOPE',
          "Access token lacks the 'ingest' scope",
          'AUTHENTICATION',
          403,
        ),
      });
      expect(await pointsOf('0xBadToken')).toBeUndefined();
    });

    // Where the platforms' JSON parsers differ: Express's takes only objects and arrays, and
    // reads an empty body as {}; Fastify's parses any JSON value and refuses an empty body.
    it.each<[string, string, string, string | Record<Platform, string>]>([
      ['malformed JSON', '[{"type":"points",', 'application/json', NOT_JSON],
      ['an empty JSON body', '', 'application/json', { express: NOT_RECORDS, fastify: NOT_JSON }],
      [
        'a JSON object',
        JSON.stringify(points('bb-1', '0xBad', 1)),
        'application/json',
        NOT_RECORDS,
      ],
      [
        'a JSON string',
        '"records"',
        'application/json',
        { express: NOT_JSON, fastify: NOT_RECORDS },
      ],
      ['text/plain', JSON.stringify(points('bb-2', '0xBad', 1)), 'text/plain', WRONG_TYPE],
      [
        'another media type',
        JSON.stringify([points('bb-3', '0xBad', 1)]),
        'application/xml',
        WRONG_TYPE,
      ],
      ['a form', 'type=points&key=bb-4', 'application/x-www-form-urlencoded', NOT_RECORDS],
    ])('refuses %s with 400 in the error envelope', async (_label, body, type, message) => {
      const expected = typeof message === 'string' ? message : message[platform];
      expect(await ingest(body, type)).toEqual({
        status: 400,
        type: expect.stringMatching(/^application\/json/),
        body: envelope('MALFORMED_REQUEST', expected, 'VALIDATION', 400),
      });
    });

    it('refuses more records than ingestMaxRecords, whole, with 400 REQUEST_TOO_LARGE', async () => {
      const records = Array.from({ length: MAX_RECORDS + 1 }, (_, i) =>
        points(`many-${i}`, '0xMany', 1),
      );
      expect(await ingest(JSON.stringify(records))).toEqual({
        status: 400,
        type: expect.stringMatching(/^application\/json/),
        body: envelope(
          'REQUEST_TOO_LARGE',
          `A request may carry at most ${MAX_RECORDS} records (got ${MAX_RECORDS + 1}); split it`,
          'VALIDATION',
          400,
        ),
      });
      const ndjson = records.map((r) => JSON.stringify(r)).join('\n');
      expect(await ingest(ndjson, 'application/x-ndjson')).toEqual({
        status: 400,
        type: expect.stringMatching(/^application\/json/),
        body: envelope(
          'REQUEST_TOO_LARGE',
          `A request may carry at most ${MAX_RECORDS} records (got more); split it`,
          'VALIDATION',
          400,
        ),
      });
      expect(await pointsOf('0xMany')).toBeUndefined();
    });

    it('refuses an NDJSON body over the size limit with 400 REQUEST_TOO_LARGE', async () => {
      const limit = NDJSON_LIMIT[platform];
      const line = JSON.stringify(points('big-1', '0xBig', 1));
      const answer = await ingest(line.padEnd(limit + 1, ' '), 'application/x-ndjson');
      expect(answer).toEqual({
        status: 400,
        type: expect.stringMatching(/^application\/json/),
        body: envelope(
          'REQUEST_TOO_LARGE',
          `Request body is too large: at most ${limit} bytes`,
          'VALIDATION',
          400,
        ),
      });
      expect(await pointsOf('0xBig')).toBeUndefined();
      // One byte less is taken.
      expect((await ingest(line.padEnd(limit, ' '), 'application/x-ndjson')).body).toMatchObject({
        accepted: 1,
      });
      expect(await pointsOf('0xBig')).toBe(1);
    });

    it('leaves the data as it was after each failed request, and applies the same records sent right', async () => {
      const records = [points('fail-1', '0xFail', 11), points('fail-2', '0xFail', 12)];
      const json = JSON.stringify(records);
      const ndjson = records.map((r) => JSON.stringify(r)).join('\n');
      const before = await board();
      const failures = [
        await ingest(json, 'application/json', null),
        await ingest(ndjson, 'application/x-ndjson', 'lpt_nope'),
        await ingest(json, 'application/json', queryToken),
        await ingest(json.slice(0, -1), 'application/json'),
        await ingest(ndjson, 'text/plain'),
        await ingest(JSON.stringify([...records, ...records, ...records]), 'application/json'),
      ];
      expect(failures.map((f) => f.status)).toEqual([401, 401, 403, 400, 400, 400]);
      expect(await board()).toEqual(before);
      expect((await ingest(ndjson, 'application/x-ndjson')).body).toMatchObject({ accepted: 2 });
      const after = await board();
      expect(after.totalCount).toBe(before.totalCount + 1);
      expect(after.list.find((e) => e.address.address === '0xFail')?.points).toBe(23);
    });
  });
  describe('GET /export', () => {
    const exportOf = (query: string, token: string | null = queryToken, signal?: AbortSignal) =>
      fetch(`${base}/export${query}`, {
        headers: token === null ? {} : { 'access-token': token },
        signal,
      });

    it('streams the board as of one moment, as CSV and NDJSON, with N and the moment', async () => {
      const expected = await board();
      const csv = await exportOf('?spaceId=1');
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(csv.headers.get('content-disposition')).toBe(
        'attachment; filename="space-1-all-time.csv"',
      );
      expect(Number(csv.headers.get('x-board-entries'))).toBe(expected.totalCount);
      expect(Date.parse(csv.headers.get('x-board-as-of') ?? '')).toBeLessThanOrEqual(Date.now());
      const lines = (await csv.text()).trim().split('\n');
      expect(lines[0]).toBe('rank,address,username,points');
      expect(lines.slice(1)).toEqual(
        expected.list.map((e) => `${e.rank},${e.address.address},,${e.points}`),
      );
      const ndjson = await exportOf('?spaceId=1&format=ndjson');
      expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
      expect(
        (await ndjson.text())
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(
        expected.list.map((e) => ({
          rank: e.rank,
          address: e.address.address,
          username: null,
          points: e.points,
        })),
      );
    });

    it('answers its refusals in the error envelope with their own status', async () => {
      const refusal = async (response: Response) => ({
        status: response.status,
        body: await response.json(),
      });
      expect(await refusal(await exportOf('?spaceId=1', null))).toEqual({
        status: 401,
        body: envelope('TOKEN_REQUIRED', 'Access token is required', 'AUTHENTICATION', 401),
      });
      expect(await refusal(await exportOf('?spaceId=1', ingestToken))).toEqual({
        status: 403,
        body: envelope(
          'INSUFFICIENT_SCOPE',
          "Access token lacks the 'query' scope",
          'AUTHENTICATION',
          403,
        ),
      });
      expect(await refusal(await exportOf('?spaceId=404'))).toEqual({
        status: 404,
        body: envelope('SPACE_NOT_FOUND', 'Space not found', 'NOT_FOUND', 404),
      });
      expect(await refusal(await exportOf('?spaceId=1&format=pdf'))).toEqual({
        status: 400,
        body: envelope('INVALID_ARGUMENT', 'format must be csv or ndjson', 'VALIDATION', 400),
      });
    });

    it('releases the export when its client goes away', async () => {
      const exports = app.get(BoardExportService);
      const controller = new AbortController();
      const response = await exportOf('?spaceId=1', queryToken, controller.signal);
      expect(response.status).toBe(200);
      controller.abort();
      for (let i = 0; i < 50 && exports.inProgress > 0; i++) await sleep(20);
      expect(exports.inProgress).toBe(0);
      expect((await exportOf('?spaceId=1')).status).toBe(200);
    });
  });
});
