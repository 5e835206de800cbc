import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import { Readable } from 'node:stream';
import { operationOf, setOperation } from './request-labels';
import { addRouteHooks } from './route-hooks';

export interface ResponseCacheOptions {
  path: string;
  /** A cached answer is served at most this long after the request that produced it began. */
  maxAgeMs: number;
  maxEntries: number;
  /** Bytes of answers (and their keys) held at most, all entries together. */
  maxTotalBytes: number;
  /** Answers larger than this are not kept. */
  maxEntryBytes: number;
  /**
   * Changes whenever data the answers show may have changed, as far as this instance knows (its
   * own writes, and other instances' board writes as the change feed reads them). An answer made
   * under another version is not served.
   */
  version: () => number;
  /**
   * What else the answer depends on, besides the body and its headers: the token the gate
   * accepted, so that no field whose answer depends on the caller (a private space's data) is ever
   * shared across tokens. '' (no token known) keeps the request out of the cache altogether.
   */
  varyBy: (request: FastifyRequest) => string;
}

interface Entry {
  payload: string;
  contentType: string;
  startedAt: number;
  version: number;
  /** The operation's label (request-labels), for the log line and metrics of each hit. */
  operation?: string;
}

const PENDING = Symbol('loyalty.responseCache');

interface Pending {
  key: string;
  startedAt: number;
  version: number;
}

/** Bodies longer than this (or sent without a Content-Length) are never looked up. */
const MAX_KEYED_BODY_BYTES = 65_536;

/**
 * Answers repeated identical POSTs to `path` from memory, after the query gate (tokens still
 * checked, budgets spent). Keyed by body bytes, Content-Type, Accept and token; read in
 * `preParsing`, so a hit skips body parsing too. Only error-free 200s, never older than `maxAgeMs`
 * nor a known change (`version`). Install before the route is registered (in `app.init()`).
 */
export function installResponseCache(
  fastify: FastifyInstance,
  options: ResponseCacheOptions,
): void {
  const entries = new Map<string, Entry>();
  let totalBytes = 0;
  const sizeOf = (key: string, entry: Entry) => key.length + entry.payload.length;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    totalBytes -= sizeOf(key, entry);
    entries.delete(key);
  };

  const lookUp: preParsingHookHandler = (request, reply, payload, done) => {
    const length = Number(request.headers['content-length']);
    // Over the route's body limit: left to the parser, which refuses it (413) without reading it.
    const limit = Math.min(MAX_KEYED_BODY_BYTES, request.routeOptions.bodyLimit ?? Infinity);
    const vary = options.varyBy(request);
    if (request.method !== 'POST' || !(length > 0 && length <= limit) || vary === '') {
      done(null, payload);
      return;
    }
    readBody(payload, length, (error, body) => {
      if (error) {
        done(error);
        return;
      }
      // latin1 maps bytes to characters one to one: two bodies share a key only when equal.
      const key = `${vary}\n${request.headers.accept ?? ''}\n${request.headers['content-type'] ?? ''}\n${body.toString('latin1')}`;
      const now = Date.now();
      const version = options.version();
      const entry = entries.get(key);
      if (reply.sent) return; // answered meanwhile (the request deadline)
      if (entry && entry.version === version && now - entry.startedAt < options.maxAgeMs) {
        if (entry.operation !== undefined) setOperation(request, entry.operation);
        void reply.code(200).header('content-type', entry.contentType).send(entry.payload);
        return;
      }
      if (entry) remove(key);
      (request as FastifyRequest & { [PENDING]?: Pending })[PENDING] = {
        key,
        startedAt: now,
        version,
      };
      done(null, Readable.from([body], { objectMode: false }));
    });
  };

  addRouteHooks(
    fastify,
    'installResponseCache',
    { path: options.path, method: 'POST' },
    { preParsing: lookUp, onSend: keep },
  );

  function keep(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: null, payload: unknown) => void,
  ): void {
    const pending = (request as FastifyRequest & { [PENDING]?: Pending })[PENDING];
    // A top-level "errors" key is the only place that text can appear unescaped.
    if (
      pending &&
      reply.statusCode === 200 &&
      typeof payload === 'string' &&
      payload.length <= options.maxEntryBytes &&
      !payload.includes('"errors":')
    ) {
      remove(pending.key);
      const entry: Entry = {
        payload,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        startedAt: pending.startedAt,
        version: pending.version,
        operation: operationOf(request),
      };
      // Oldest first out, by count and by bytes.
      while (
        entries.size > 0 &&
        (entries.size >= options.maxEntries ||
          totalBytes + sizeOf(pending.key, entry) > options.maxTotalBytes)
      ) {
        remove(entries.keys().next().value!);
      }
      entries.set(pending.key, entry);
      totalBytes += sizeOf(pending.key, entry);
    }
    done(null, payload);
  }
}

/**
 * Reads a body of `length` bytes (its Content-Length, which Node's parser holds it to). An error
 * or an early end is a 400, as Fastify's own body reading answers.
 */
function readBody(
  payload: NodeJS.ReadableStream,
  length: number,
  callback: (error: (Error & { statusCode?: number }) | null, body: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const onEnd = (error?: Error & { statusCode?: number }) => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
    if (!error && received !== length)
      error = new Error('Request body size did not match Content-Length');
    if (error) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400))
        error.statusCode = 400;
      callback(error, Buffer.alloc(0));
      return;
    }
    callback(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}
