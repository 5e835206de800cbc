import { PassThrough, Readable } from 'node:stream';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import {
  DEFAULT_NDJSON_MAX_BYTES,
  describeBodyFailure,
  IngestHttpRequest,
  ndjsonLimitOf,
  readIngestBody,
} from './ingest-body';

const LIMITS = { maxRecords: 3, maxBytes: 1000 };
const space = (id: number) => ({ type: 'space', id, name: `Space ${id}` });
const ndjson = (...lines: string[]) => lines.join('\n');

/** An Express request: the unread body stream itself, no `body` when no parser matched. */
function expressRequest(headers: Record<string, string>, chunks: string[]): IngestHttpRequest {
  const request = Readable.from(chunks) as Readable & IngestHttpRequest;
  request.headers = headers;
  return request;
}

async function refusal(request: IngestHttpRequest, limits = LIMITS) {
  const error: unknown = await readIngestBody(request, limits).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof LoyaltyException)) throw new Error(`not refused: ${String(error)}`);
  return { code: error.code, message: error.message };
}

const NOT_RECORDS = {
  code: ErrorCode.MALFORMED_REQUEST,
  message:
    'The body must be a JSON array of records (application/json) or one record per line (application/x-ndjson)',
};
const WRONG_TYPE = {
  code: ErrorCode.MALFORMED_REQUEST,
  message: 'Content-Type must be application/json (an array of records) or application/x-ndjson',
};

describe('readIngestBody', () => {
  describe('a JSON array (parsed by the host)', () => {
    it('numbers its records by 1-based position, refusing a bad one in its place', async () => {
      const records = await readIngestBody(
        { headers: { 'content-type': 'application/json' }, body: [space(1), { type: 'x' }] },
        LIMITS,
      );
      expect(records.map((r) => [r.line, r.parsed.ok])).toEqual([
        [1, true],
        [2, false],
      ]);
    });

    it('refuses more records than the limit, saying how many came', async () => {
      const body = [space(1), space(2), space(3), space(4)];
      expect(await refusal({ headers: { 'content-type': 'application/json' }, body })).toEqual({
        code: ErrorCode.REQUEST_TOO_LARGE,
        message: 'A request may carry at most 3 records (got 4); split it',
      });
    });
  });

  describe('NDJSON', () => {
    const lines = ndjson(JSON.stringify(space(1)), '', '{"type":', JSON.stringify(space(2)));
    const expected = [
      [1, true],
      [3, false],
      [4, true],
    ];
    const numbered = async (request: IngestHttpRequest) =>
      (await readIngestBody(request, LIMITS)).map((r) => [r.line, r.parsed.ok]);

    it.each([
      ['text from a host parser', lines],
      ['a buffer from a host parser', Buffer.from(lines)],
      ["the module's Fastify parser's stream", Readable.from([lines.slice(0, 7), lines.slice(7)])],
    ])('reads %s, numbering lines as import does', async (_label, body) => {
      const headers = { 'content-type': 'application/x-ndjson' };
      expect(await numbered({ headers, body })).toEqual(expected);
    });

    it('reads the request itself when no parser took the body (Express)', async () => {
      const request = expressRequest({ 'content-type': 'application/ndjson; charset=utf-8' }, [
        lines.slice(0, 5),
        lines.slice(5),
      ]);
      expect(await numbered(request)).toEqual(expected);
    });

    it('refuses more records than the limit, whole', async () => {
      const body = ndjson(...[1, 2, 3, 4, 5].map((id) => JSON.stringify(space(id))));
      const headers = { 'content-type': 'application/x-ndjson' };
      expect(await refusal({ headers, body })).toEqual({
        code: ErrorCode.REQUEST_TOO_LARGE,
        message: 'A request may carry at most 3 records (got more); split it',
      });
    });

    it('refuses a body whose declared length is over the limit before reading any of it', async () => {
      const request = expressRequest(
        { 'content-type': 'application/x-ndjson', 'content-length': '1001' },
        [JSON.stringify(space(1))],
      );
      expect(await refusal(request)).toEqual({
        code: ErrorCode.REQUEST_TOO_LARGE,
        message: 'Request body is too large: at most 1000 bytes',
      });
      expect((request as unknown as Readable).readableDidRead).toBe(false);
    });

    it('refuses a body that grows over the limit without a declared length', async () => {
      const line = JSON.stringify(space(1));
      const chunks = Array.from({ length: Math.ceil(1001 / line.length) }, () => `${line}\n`);
      expect(chunks.join('').length).toBeGreaterThan(1000);
      const request = expressRequest({ 'content-type': 'application/x-ndjson' }, chunks);
      expect(await refusal(request, { maxRecords: 1000, maxBytes: 1000 })).toEqual({
        code: ErrorCode.REQUEST_TOO_LARGE,
        message: 'Request body is too large: at most 1000 bytes',
      });
    });

    it('refuses a body cut off by its client', async () => {
      const body = new PassThrough();
      const reading = refusal({ headers: { 'content-type': 'application/x-ndjson' }, body });
      body.write(`${JSON.stringify(space(1))}\n{"type"`);
      body.destroy();
      expect(await reading).toEqual({
        code: ErrorCode.MALFORMED_REQUEST,
        message: 'The request body ended before its end',
      });
    });

    it('fails (500, not a client mistake) when a middleware already read the body', async () => {
      const request = expressRequest({ 'content-type': 'application/x-ndjson' }, ['x\n']);
      for await (const _chunk of request as unknown as Readable) void _chunk;
      await expect(readIngestBody(request, LIMITS)).rejects.not.toBeInstanceOf(LoyaltyException);
      await expect(readIngestBody(request, LIMITS)).rejects.toThrow(
        'The NDJSON body was read before POST /ingest',
      );
    });
  });

  describe('anything else', () => {
    it.each<[string, IngestHttpRequest, typeof NOT_RECORDS]>([
      [
        'a JSON object',
        { headers: { 'content-type': 'application/json' }, body: space(1) },
        NOT_RECORDS,
      ],
      [
        'a JSON string',
        { headers: { 'content-type': 'application/json' }, body: 'x' },
        NOT_RECORDS,
      ],
      ['an empty JSON body', { headers: { 'content-type': 'application/json' } }, NOT_RECORDS],
      [
        'a parsed form',
        { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: { a: '1' } },
        NOT_RECORDS,
      ],
      ['text/plain', { headers: { 'content-type': 'text/plain' }, body: 'x' }, WRONG_TYPE],
      [
        'raw bytes',
        { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from('[]') },
        WRONG_TYPE,
      ],
      ['no content type', { headers: {} }, WRONG_TYPE],
    ])('refuses %s', async (_label, request, expected) => {
      expect(await refusal(request)).toEqual(expected);
    });

    it('leaves an unread body of another type unread', async () => {
      const request = expressRequest({ 'content-type': 'text/plain' }, ['x']);
      expect(await refusal(request)).toEqual(WRONG_TYPE);
      expect((request as unknown as Readable).readableDidRead).toBe(false);
    });
  });
});

describe('ndjsonLimitOf', () => {
  it("is the Fastify route's body limit, else the module's default", () => {
    expect(ndjsonLimitOf({ headers: {}, routeOptions: { bodyLimit: 2048 } })).toBe(2048);
    expect(ndjsonLimitOf({ headers: {} })).toBe(DEFAULT_NDJSON_MAX_BYTES);
    expect(DEFAULT_NDJSON_MAX_BYTES).toBe(16 * 1024 * 1024);
  });
});

describe('describeBodyFailure', () => {
  it('names the limit of a body too large, the media types of a refused one, else bad JSON', () => {
    expect(describeBodyFailure(413, 99)).toEqual({
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: 'Request body is too large: at most 99 bytes',
    });
    expect(describeBodyFailure(413, undefined)).toEqual({
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: 'Request body is too large',
    });
    expect(describeBodyFailure(415, undefined)).toEqual(WRONG_TYPE);
    expect(describeBodyFailure(400, 99)).toEqual({
      code: ErrorCode.MALFORMED_REQUEST,
      message: 'Request body is not valid JSON',
    });
  });
});
