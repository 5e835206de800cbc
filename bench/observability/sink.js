// The OTLP/HTTP trace sink of bench/observability.js, in its own process (so its CPU is counted
// apart from the service's and the load generator's), driven over IPC as bench/pages/ children:
//   { cmd: 'start', names } -> { ports: { name: port } }   { cmd: 'stats' } -> { name: counts }
//   { cmd: 'cpu' }   { cmd: 'close' }
// One listener per name (one per traced service, so each one's spans are counted apart). Each
// answers 200 to POST /v1/traces, as a collector does, and counts the requests, their bytes and
// the spans in them (server spans apart: one per traced request). The body is decoded just
// enough to count: protobuf (the service's default protocol) by walking its fields, JSON by
// parsing; gzip when the exporter compresses (OTEL_EXPORTER_OTLP_COMPRESSION=gzip).
/* eslint-disable */
const { serveParent } = require('../pages/child');
const http = require('node:http');
const zlib = require('node:zlib');

const SPAN_KIND_SERVER = 2;

const counts = {};
const servers = [];

/** [value, next offset] of the varint at `i` (lengths and keys: well within 2^53). */
function varint(buf, i) {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = buf[i++];
    if (byte === undefined) throw new Error('truncated varint');
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i];
    scale *= 128;
  }
}

/** Calls visit(field, wireType, start, end) for each field of the message in buf[start, end). */
function eachField(buf, start, end, visit) {
  let i = start;
  while (i < end) {
    const [key, at] = varint(buf, i);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    i = at;
    if (wire === 0) {
      const [value, next] = varint(buf, i);
      visit(field, wire, value, next);
      i = next;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const [length, next] = varint(buf, i);
      visit(field, wire, next, next + length);
      i = next + length;
    } else throw new Error(`wire type ${wire}`);
  }
  if (i !== end) throw new Error('message overruns its length');
}

/**
 * ExportTraceServiceRequest { 1: ResourceSpans } ResourceSpans { 2: ScopeSpans }
 * ScopeSpans { 2: Span } Span { 6: kind }.
 */
function countProtobuf(buf) {
  let spans = 0;
  let serverSpans = 0;
  eachField(buf, 0, buf.length, (f1, w1, s1, e1) => {
    if (f1 !== 1 || w1 !== 2) return;
    eachField(buf, s1, e1, (f2, w2, s2, e2) => {
      if (f2 !== 2 || w2 !== 2) return;
      eachField(buf, s2, e2, (f3, w3, s3, e3) => {
        if (f3 !== 2 || w3 !== 2) return;
        spans++;
        eachField(buf, s3, e3, (f4, w4, value) => {
          if (f4 === 6 && w4 === 0 && value === SPAN_KIND_SERVER) serverSpans++;
        });
      });
    });
  });
  return { spans, serverSpans };
}

function countJson(buf) {
  let spans = 0;
  let serverSpans = 0;
  for (const rs of JSON.parse(buf.toString('utf8')).resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const span of ss.spans ?? []) {
        spans++;
        if (span.kind === SPAN_KIND_SERVER || span.kind === 'SPAN_KIND_SERVER') serverSpans++;
      }
  return { spans, serverSpans };
}

const handlers = {
  async start({ names }) {
    const ports = {};
    for (const name of names) {
      counts[name] = { posts: 0, bytes: 0, spans: 0, serverSpans: 0, undecoded: 0, other: 0 };
      const server = listener(counts[name]);
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      ports[name] = server.address().port;
    }
    return { ports };
  },
  async stats() {
    return structuredClone(counts);
  },
  async close() {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    setImmediate(() => process.exit(0));
    return null;
  },
};

function listener(counts) {
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url.split('?')[0] !== '/v1/traces') {
        counts.other++;
        response.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      counts.posts++;
      counts.bytes += body.length;
      const json = String(request.headers['content-type']).includes('json');
      try {
        if (request.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
        const c = json ? countJson(body) : countProtobuf(body);
        counts.spans += c.spans;
        counts.serverSpans += c.serverSpans;
      } catch {
        counts.undecoded++;
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      response.writeHead(200, {
        'content-type': json ? 'application/json' : 'application/x-protobuf',
      });
      response.end(json ? '{}' : '');
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

serveParent(handlers);
