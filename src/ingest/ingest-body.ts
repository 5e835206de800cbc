import { Readable } from 'node:stream';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { parseRecord } from '../records/ingest-record';
import { limitBytes } from './byte-limit';
import { NumberedRecord, readNdjson } from './record-stream';

/** The media types of NDJSON bodies; the first is the one docs/ingest.md names. */
export const NDJSON_MEDIA_TYPES = ['application/x-ndjson', 'application/ndjson'] as const;

/**
 * NDJSON bytes one request may carry where the host's HTTP server sets no limit for the route
 * (Express): the standalone service's default INGEST_MAX_BODY_BYTES.
 */
export const DEFAULT_NDJSON_MAX_BYTES = 16 * 1_048_576;

export interface IngestBodyLimits {
  maxRecords: number;
  /** NDJSON bytes; a JSON array is limited by the host's JSON parser. */
  maxBytes: number;
}

/**
 * A POST /ingest request as an adapter hands it over: `body` parsed by the host's parser (a JSON
 * value, or NDJSON text), or the module's Fastify parser's unread stream; on Express, no `body`
 * for NDJSON and the request itself is the unread stream.
 */
export interface IngestHttpRequest {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** Fastify: the route's body limit. */
  routeOptions?: { bodyLimit?: number };
}

const NOT_RECORDS =
  'The body must be a JSON array of records (application/json) or one record per line (application/x-ndjson)';

const tooManyRecords = (max: number, got: string) =>
  new LoyaltyException(
    ErrorCode.REQUEST_TOO_LARGE,
    `A request may carry at most ${max} records (got ${got}); split it`,
  );

/** What answers a body the HTTP server refused before the route ran, by its HTTP status. */
export function describeBodyFailure(
  status: number,
  maxBytes: number | undefined,
): { code: ErrorCode; message: string } {
  if (status === 413) {
    return {
      code: ErrorCode.REQUEST_TOO_LARGE,
      message:
        maxBytes === undefined
          ? 'Request body is too large'
          : `Request body is too large: at most ${maxBytes} bytes`,
    };
  }
  if (status === 415) {
    return {
      code: ErrorCode.MALFORMED_REQUEST,
      message:
        'Content-Type must be application/json (an array of records) or application/x-ndjson',
    };
  }
  return { code: ErrorCode.MALFORMED_REQUEST, message: 'Request body is not valid JSON' };
}

/** The body limit of the route: Fastify's for it, else the module's default. */
export function ndjsonLimitOf(request: IngestHttpRequest): number {
  const limit = request.routeOptions?.bodyLimit;
  return typeof limit === 'number' && limit > 0 ? limit : DEFAULT_NDJSON_MAX_BYTES;
}

function mediaTypeOf(request: IngestHttpRequest): string {
  const header = request.headers['content-type'];
  const value = Array.isArray(header) ? header[0] : header;
  return (value ?? '').split(';')[0].trim().toLowerCase();
}

/** The NDJSON bytes of the request, however the adapter left them; undefined when none. */
function ndjsonSource(request: IngestHttpRequest): Readable | undefined {
  const { body } = request;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Readable.from([body]);
  if (body instanceof Readable) return body;
  if (body === undefined && request instanceof Readable) {
    // Read by a middleware that kept nothing: the host's wiring, not the client, is at fault.
    if (request.readableDidRead) throw new Error('The NDJSON body was read before POST /ingest');
    return request;
  }
  return undefined;
}

/**
 * The records of a POST /ingest body, numbered as `import` numbers them: a JSON array (parsed by
 * the host's JSON parser), or NDJSON (application/x-ndjson or application/ndjson) streamed
 * through {@link readNdjson}. More than `limits.maxRecords` records, or more than
 * `limits.maxBytes` of NDJSON, is REQUEST_TOO_LARGE; any other body is MALFORMED_REQUEST.
 */
export async function readIngestBody(
  request: IngestHttpRequest,
  limits: IngestBodyLimits,
): Promise<NumberedRecord[]> {
  const { body } = request;
  if (Array.isArray(body)) {
    if (body.length > limits.maxRecords)
      throw tooManyRecords(limits.maxRecords, String(body.length));
    return body.map((value, index) => ({ line: index + 1, parsed: parseRecord(value) }));
  }
  const mediaType = mediaTypeOf(request);
  if (!(NDJSON_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
    // JSON that is no array, or a form: records in the wrong shape. Anything else: the wrong type.
    const shapeOnly =
      mediaType === 'application/json' ||
      (typeof body === 'object' &&
        body !== null &&
        !(body instanceof Readable) &&
        !Buffer.isBuffer(body));
    if (shapeOnly) throw new LoyaltyException(ErrorCode.MALFORMED_REQUEST, NOT_RECORDS);
    throw new LoyaltyException(
      ErrorCode.MALFORMED_REQUEST,
      describeBodyFailure(415, undefined).message,
    );
  }
  const tooLarge = () =>
    new LoyaltyException(
      ErrorCode.REQUEST_TOO_LARGE,
      describeBodyFailure(413, limits.maxBytes).message,
    );
  const declared = Number(request.headers['content-length']);
  if (declared > limits.maxBytes) throw tooLarge();
  const source = ndjsonSource(request);
  if (!source) throw new LoyaltyException(ErrorCode.MALFORMED_REQUEST, NOT_RECORDS);
  const bytes = limitBytes(source, limits.maxBytes, {
    tooLarge,
    cutOff: () =>
      new LoyaltyException(ErrorCode.MALFORMED_REQUEST, 'The request body ended before its end'),
  });
  const records: NumberedRecord[] = [];
  try {
    for await (const record of readNdjson(bytes)) {
      if (records.length === limits.maxRecords) throw tooManyRecords(limits.maxRecords, 'more');
      records.push(record);
    }
  } finally {
    bytes.destroy();
  }
  return records;
}
