import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../utils/cli';
import { createTestDatabase, DB_KINDS, DbKind, TestDatabase } from '../utils/test-databases';

/*
 * Traces as an operator sees them: the built service, in a process of its own, sends its spans
 * over OTLP/HTTP (the JSON encoding) to a collector this spec plays. Spans are exported only at
 * shutdown here (the batch delay is ten minutes), so every span seen also shows that SIGTERM
 * flushes them.
 */

const DIST = join(__dirname, '..', '..', 'dist', 'src', 'host');
const MAIN = join(DIST, 'main.js');
const SPAN_KIND = { SERVER: 2, CLIENT: 3 };
const SPACE_ID = 7;
/** Values a client sends that no span may carry. */
const SECRET_ADDRESS = `0xfacade${randomBytes(8).toString('hex')}`;
const INVITATION_SECRET = `inv${randomBytes(12).toString('hex')}`;
const QUERY = `query Board($address: String!) { space(id: ${SPACE_ID}) { name
  addressLoyaltyPoints(address: $address) { rank points }
  loyaltyPointsRanks { totalCount list { rank points address { address } } } } }`;

interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  events: unknown[];
  scope: string;
  service: unknown;
}

/** An OTLP/HTTP collector: POST /v1/traces, JSON, every span flattened. */
class FakeCollector {
  readonly spans: CollectedSpan[] = [];
  readonly contentTypes = new Set<string>();
  private readonly server: Server = createServer((request, response) => {
    void this.receive(request).then(() => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async receive(request: IncomingMessage): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const contentType = request.headers['content-type'];
    this.contentTypes.add(`${request.url} ${contentType}`);
    // Protobuf bodies are only counted: the specs read spans sent as JSON.
    if (contentType !== 'application/json') return;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            status: span.status ?? {},
            events: span.events ?? [],
            scope: scopeSpans.scope?.name,
            service,
          });
        }
      }
    }
  }
}

function attributesOf(list: Array<{ key: string; value: Record<string, unknown> }> = []) {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}

async function freePort(): Promise<number> {
  const server = createNetServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

interface Service {
  base: string;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM, then the process's end: its exit code and the signal that ended it. */
  stop(): Promise<[number | null, NodeJS.Signals | null]>;
}

/** The built service as an operator starts it (main.js imports the tracing module first). */
async function startService(
  databaseUrl: string,
  env: Record<string, string>,
  preload: string[] = [],
): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, [...preload.flatMap((p) => ['-r', p]), MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit');
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || i > 300) throw new Error(`the service did not start: ${stderr}`);
    await sleep(50);
  }
  return {
    base,
    child,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return (await exited) as [number | null, NodeJS.Signals | null];
    },
  };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe.each(DB_KINDS)('traces of the service on %s', (kind: DbKind) => {
  let db: TestDatabase;
  let collector: FakeCollector;
  let token: string;
  const clientTrace = { traceId: hex(16), parentId: hex(8) };
  const answers: Record<string, number> = {};
  let ended: [number | null, NodeJS.Signals | null] | undefined;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    collector = new FakeCollector();
    const endpoint = await collector.start();
    const created = await runCli(
      ['token', 'create', '--name', 'traced', '--scope', 'query,ingest'],
      {
        DATABASE_URL: db.url,
      },
    );
    expect(created.code).toBe(0);
    token = created.stdout.trim();
    const service = await startService(db.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    try {
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${service.base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'access-token': token, ...headers },
          body: JSON.stringify(body),
        });
      const ingest = await post('/ingest', [
        { type: 'space', id: SPACE_ID, name: 'Traced' },
        {
          type: 'points',
          key: 'traced-1',
          spaceId: SPACE_ID,
          address: SECRET_ADDRESS,
          points: 31337,
          occurredAt: '2026-05-01T00:00:00Z',
        },
      ]);
      answers.ingest = ingest.status;
      const query = await post(
        '/query',
        { query: QUERY, variables: { address: SECRET_ADDRESS } },
        { traceparent: `00-${clientTrace.traceId}-${clientTrace.parentId}-01` },
      );
      const answer = (await query.json()) as any;
      expect(answer.data.space.addressLoyaltyPoints).toEqual({ rank: 1, points: 31337 });
      answers.query = query.status;
      const exported = await fetch(`${service.base}/export?spaceId=${SPACE_ID}&format=csv`, {
        headers: { 'access-token': token },
      });
      await exported.text();
      answers.export = exported.status;
      answers.dashboard = (await fetch(`${service.base}/dashboard`, { redirect: 'manual' })).status;
      answers.invitation = (
        await fetch(`${service.base}/dashboard/invitations/${INVITATION_SECRET}`, {
          redirect: 'manual',
        })
      ).status;
      answers.unauthorised = (
        await post('/query', { query: '{ __typename }' }, { 'access-token': 'lpt_nope' })
      ).status;
      // Probes are not traced: ready checks the database, but makes no span.
      expect((await fetch(`${service.base}/health/ready`)).status).toBe(200);
      // Nothing is exported before the shutdown flush.
      await sleep(300);
      expect(collector.spans).toEqual([]);
    } finally {
      ended = await service.stop();
    }
  });

  afterAll(async () => {
    await collector?.stop();
    await db?.drop();
  });

  const servers = () => collector.spans.filter((s) => s.kind === SPAN_KIND.SERVER);
  const serverSpan = (name: string) => {
    const found = servers().filter((s) => s.name === name);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const childrenOf = (parent: CollectedSpan) =>
    collector.spans.filter((s) => s.parentSpanId === parent.spanId);

  it('exports the spans when the service stops, as loyalty-leaderboard over OTLP/HTTP JSON', () => {
    // SIGTERM still ends the process once the spans are out, as it does with tracing off.
    expect(ended).toEqual([null, 'SIGTERM']);
    expect(collector.spans.length).toBeGreaterThan(0);
    expect([...collector.contentTypes]).toEqual(['/v1/traces application/json']);
    expect(new Set(collector.spans.map((s) => s.service))).toEqual(
      new Set(['loyalty-leaderboard']),
    );
  });

  it('makes a server span of POST /query, continuing the caller trace, with SQL statements under it', () => {
    const query = servers().find((s) => s.attributes['graphql.operation.name'] === 'Board')!;
    expect(query).toBeDefined();
    expect(answers.query).toBe(200);
    expect(query).toMatchObject({
      name: 'POST /query',
      traceId: clientTrace.traceId,
      parentSpanId: clientTrace.parentId,
      attributes: {
        'http.route': '/query',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'graphql.operation.type': 'query',
      },
    });
    const statements = childrenOf(query).filter(
      (s) =>
        s.attributes['db.system.name'] ===
        { sqlite: 'sqlite', mariadb: 'mysql', postgres: 'postgresql' }[kind],
    );
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.kind).toBe(SPAN_KIND.CLIENT);
      expect(statement.traceId).toBe(clientTrace.traceId);
    }
    // The address is looked up with a placeholder; the statement shows it, not the address.
    expect(
      statements.some((s) =>
        /address_key = (\?|\$\d+)/.test(String(s.attributes['db.query.text'])),
      ),
    ).toBe(true);
  });

  it('makes server spans of /ingest, /export and the dashboard, with their status', () => {
    const ingest = serverSpan('POST /ingest');
    expect([answers.ingest, ingest.attributes['http.response.status_code']]).toEqual([200, 200]);
    expect(
      childrenOf(ingest).some((s) => /^INSERT/.test(String(s.attributes['db.query.text']))),
    ).toBe(true);
    const exported = serverSpan('GET /export');
    expect([answers.export, exported.attributes['http.response.status_code']]).toEqual([200, 200]);
    // The query string keeps its names only.
    expect(exported.attributes['url.query']).toBe('spaceId=REDACTED&format=REDACTED');
    const dashboard = serverSpan('GET /dashboard');
    expect([answers.dashboard, dashboard.attributes['http.response.status_code']]).toEqual([
      303, 303,
    ]);
  });

  it('shows a refused request with its status', () => {
    const refused = servers().filter((s) => s.attributes['http.response.status_code'] === 401);
    expect(answers.unauthorised).toBe(401);
    expect(refused.map((s) => s.name)).toEqual(['POST /query']);
  });

  it('shows Redis commands by name only', () => {
    const redis = collector.spans.filter((s) => s.attributes['db.system.name'] === 'redis');
    expect(redis.length).toBeGreaterThan(0);
    for (const span of redis) expect(span.attributes['db.query.text']).toMatch(/^[a-z]+$/i);
  });

  it('traces nothing outside requests: no probe, no background statement', () => {
    expect(
      servers()
        .map((s) => s.attributes['url.path'])
        .sort(),
    ).toEqual(
      ['/dashboard', '/dashboard/invitations/***', '/export', '/ingest', '/query', '/query'].sort(),
    );
    const requestTraces = new Set(servers().map((s) => s.traceId));
    for (const span of collector.spans) {
      expect(requestTraces.has(span.traceId)).toBe(true);
      if (span.kind !== SPAN_KIND.SERVER) expect(span.parentSpanId).toBeDefined();
    }
  });

  it('never carries a parameter value or an access token', () => {
    const everything = JSON.stringify(
      collector.spans.map((s) => [s.name, s.attributes, s.events, s.status]),
    );
    expect(everything).not.toContain(SECRET_ADDRESS);
    expect(everything).not.toContain(SECRET_ADDRESS.toLowerCase().slice(2));
    expect(everything).not.toContain('31337');
    expect(everything).not.toContain(token);
    expect(everything).not.toContain('lpt_nope');
    // An invitation link's secret is a credential: its span has the route, the path masked.
    expect(everything).not.toContain(INVITATION_SECRET);
    const invitation = serverSpan('GET /dashboard/invitations/:secret');
    expect(invitation.attributes['http.response.status_code']).toBe(answers.invitation);
  });
});

describe('with no OTLP endpoint', () => {
  let db: TestDatabase;
  let scratch: string;
  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    scratch = mkdtempSync(join(tmpdir(), 'loyalty-tracing-'));
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  /**
   * The packages the service process loads, each with the file that asked for it (a preloaded
   * probe reports them as they are required).
   */
  async function packagesLoaded(env: Record<string, string>): Promise<Map<string, string[]>> {
    const probe = join(scratch, 'probe.js');
    writeFileSync(
      probe,
      `const Module = require('node:module');
const load = Module._load;
Module._load = function (request, parent) {
  if (/^(@opentelemetry\\/|better-sqlite3$|fastify$)/.test(request))
    process.stderr.write('loaded ' + request + ' by ' + (parent && parent.filename) + '\\n');
  return load.apply(this, arguments);
};`,
    );
    const service = await startService(db.url, env, [probe]);
    try {
      const response = await fetch(`${service.base}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.status).toBe(401);
    } finally {
      expect(await service.stop()).toEqual([null, 'SIGTERM']);
    }
    const loaded = new Map<string, string[]>();
    for (const [, name, by] of service.stderr().matchAll(/^loaded (\S+) by (.*)$/gm))
      loaded.set(name, [...(loaded.get(name) ?? []), by]);
    return loaded;
  }

  it('loads nothing of OpenTelemetry: no SDK, exporter or instrumentation', async () => {
    const loaded = await packagesLoaded({
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    });
    // The probe saw the service load its drivers...
    expect([...loaded.keys()]).toEqual(expect.arrayContaining(['better-sqlite3', 'fastify']));
    // ...and of OpenTelemetry at most the API, a no-op facade with no SDK behind it, which
    // prom-client requires for its exemplars: never asked for by the service's own code.
    const otel = [...loaded].filter(([name]) => name.startsWith('@opentelemetry/'));
    expect(otel.map(([name]) => name).filter((name) => name !== '@opentelemetry/api')).toEqual([]);
    for (const [, by] of otel)
      for (const file of by) expect(file).toMatch(/node_modules\/prom-client\//);
  });

  it('loads it once an endpoint is set (the probe sees it when it is there)', async () => {
    const collector = new FakeCollector();
    const endpoint = await collector.start();
    try {
      const loaded = await packagesLoaded({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
      });
      expect(loaded.get('@opentelemetry/sdk-trace-node')).toContainEqual(
        expect.stringContaining(join('dist', 'src', 'host', 'tracing', 'tracing-sdk.js')),
      );
      // The default encoding is protobuf.
      expect([...collector.contentTypes]).toEqual(['/v1/traces application/x-protobuf']);
    } finally {
      await collector.stop();
    }
  });

  it('refuses an encoding it cannot send, as any invalid setting', async () => {
    const started = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        PORT: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    started.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = await once(started, 'exit');
    expect(code).toBe(2);
    expect(stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json');
  });
});
