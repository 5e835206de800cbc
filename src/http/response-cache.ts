import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface ResponseCacheOptions {
  path: string;
  /** A cached answer is served at most this long after the request that produced it began. */
  maxAgeMs: number;
  maxEntries: number;
  /** Answers larger than this are not kept. */
  maxEntryBytes: number;
  /**
   * Changes whenever data the answers show may have changed, as far as this instance knows (its
   * own writes, and other instances' board writes as the change feed reads them). An answer made
   * under another version is not served.
   */
  version: () => number;
}

interface Entry {
  payload: string;
  contentType: string;
  startedAt: number;
  version: number;
}

const PENDING = Symbol('loyalty.responseCache');

interface Pending {
  key: string;
  startedAt: number;
  version: number;
}

/**
 * Serves repeated identical POSTs to `path` (what web pages showing the top of a board send) from
 * memory, skipping GraphQL execution. It sits after the query gate: every request still has its
 * token checked and spends its rate limit budget. Keyed by the exact body and Accept header; only
 * 200 answers without errors are kept, and an answer is never older than `maxAgeMs` nor from
 * before a known change (see `version`).
 */
export function installResponseCache(
  fastify: FastifyInstance,
  options: ResponseCacheOptions,
): void {
  const entries = new Map<string, Entry>();

  fastify.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST' || request.routeOptions.url !== options.path) return;
    if (reply.sent || request.body === undefined) return;
    const key = `${request.headers.accept ?? ''}\n${JSON.stringify(request.body)}`;
    const now = Date.now();
    const version = options.version();
    const entry = entries.get(key);
    if (entry && entry.version === version && now - entry.startedAt < options.maxAgeMs) {
      return reply.code(200).header('content-type', entry.contentType).send(entry.payload);
    }
    if (entry) entries.delete(key);
    (request as FastifyRequest & { [PENDING]?: Pending })[PENDING] = {
      key,
      startedAt: now,
      version,
    };
  });

  fastify.addHook('onSend', async (request, reply, payload) => {
    const pending = (request as FastifyRequest & { [PENDING]?: Pending })[PENDING];
    if (!pending || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    // A top-level "errors" key is the only place that text can appear unescaped.
    if (payload.length > options.maxEntryBytes || payload.includes('"errors":')) return payload;
    if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(pending.key, {
      payload,
      contentType: String(reply.getHeader('content-type') ?? 'application/json'),
      startedAt: pending.startedAt,
      version: pending.version,
    });
    return payload;
  });
}
