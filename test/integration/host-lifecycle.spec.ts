import { Agent, request as httpRequest, ClientRequest } from 'node:http';
import { createServer } from 'node:net';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { IngestLoad } from '../../src/host/http/ingest-load';
import { DB_KINDS } from '../utils/test-databases';
import { startTestApp } from '../utils/test-app';

const REDIS_URL = process.env.REDIS_URL_FOR_TESTS ?? 'redis://127.0.0.1:6379';

/** A loopback port that nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Whether the request went out on a connection an earlier request had kept alive. */
  reusedSocket: boolean;
}

/**
 * One kept-alive connection to the service (an Agent with a single socket), as a load balancer
 * or an HTTP client library holds one. `start` sends the headers and lets the caller write the body.
 */
function keptConnection(base: URL) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const start = (
    method: string,
    path: string,
    headers: Record<string, string | number> = {},
  ): { request: ClientRequest; answer: Promise<Answer> } => {
    const request = httpRequest({
      host: base.hostname,
      port: base.port,
      method,
      path,
      headers,
      agent,
    });
    const answer = new Promise<Answer>((resolve, reject) => {
      request.on('error', reject);
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            text,
            reusedSocket: request.reusedSocket,
          }),
        );
      });
    });
    return { request, answer };
  };
  const send = (method: string, path: string, headers: Record<string, string> = {}, body = '') => {
    const started = start(
      method,
      path,
      body ? { ...headers, 'content-length': body.length } : headers,
    );
    started.request.end(body);
    return started.answer;
  };
  return { agent, start, send };
}

const until = async (check: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe.each(DB_KINDS)('the host starting and stopping on %s', (kind) => {
  it('reports the rate-limit store degraded from the first readiness check when Redis never answered', async () => {
    const t = await startTestApp(kind, {
      REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      RATE_LIMIT_TOKEN: '3/30s',
    });
    try {
      // No request has tried the store yet.
      const ready = await fetch(t.url.replace('/query', '/health/ready'));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        checks: { database: 'up', shuttingDown: false, rateLimitStore: 'degraded' },
      });
      // Limits still hold, per instance.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.gql('{ __typename }')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await t.close();
    }
  });

  it('reports the store shared from the first readiness check when Redis answers', async () => {
    const t = await startTestApp(kind, { REDIS_URL });
    try {
      const ready = await fetch(t.url.replace('/query', '/health/ready'));
      expect(await ready.json()).toMatchObject({ checks: { rateLimitStore: 'shared' } });
    } finally {
      await t.close();
    }
  });

  it('cuts a request still in flight 10 s into a shutdown, and finishes closing', async () => {
    const t = await startTestApp(kind);
    const connection = keptConnection(new URL(t.url));
    const { token } = await t.app.get(AccessTokensService).create('slow', ['ingest']);
    try {
      // A client that stops sending its body half-way.
      const stalled = connection.start('POST', '/ingest', {
        'content-type': 'application/x-ndjson',
        'access-token': token,
        'content-length': 1000,
      });
      stalled.request.write('{"type":"space",');
      const load = t.app.get(IngestLoad);
      await until(() => load.requestsInFlight === 1, 'the ingest request to arrive');
      const started = Date.now();
      await t.app.close();
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(9_500);
      expect(took).toBeLessThan(15_000);
      await expect(stalled.answer).rejects.toThrow(/socket hang up|ECONNRESET/);
    } finally {
      connection.agent.destroy();
      await t.db.drop();
    }
  });

  it('answers every request on a kept-alive connection during shutdown in the envelope, with Connection: close', async () => {
    const t = await startTestApp(kind);
    const base = new URL(t.url);
    const connections = [keptConnection(base), keptConnection(base)];
    const json = { 'content-type': 'application/json', 'access-token': t.token };
    const query = JSON.stringify({ query: '{ __typename }' });
    const { token: ingestToken } = await t.app.get(AccessTokensService).create('feed', ['ingest']);
    const records = (i: number) => `{"type":"space","id":${i + 1},"name":"Space ${i + 1}"}\n`;
    let closing: Promise<void> | undefined;
    try {
      for (const connection of connections) {
        const first = await connection.send('GET', '/health/live');
        expect(first.status).toBe(200);
      }
      // An ingest request in flight on each connection (its body not all sent) keeps it busy, so
      // the listener's close leaves it open, as for a client in the middle of a request.
      const inFlight = connections.map((connection, i) => {
        const started = connection.start('POST', '/ingest', {
          'content-type': 'application/x-ndjson',
          'access-token': ingestToken,
          'content-length': records(i).length,
        });
        started.request.write(records(i).slice(0, 5));
        return started;
      });
      const load = t.app.get(IngestLoad);
      await until(() => load.requestsInFlight === 2, 'the ingest requests to arrive');
      // What SIGTERM does (main.ts enables Nest's shutdown hooks: they run app.close() with the
      // signal's name), without ending this process.
      closing = t.app.close();
      await until(() => !t.app.getHttpServer().listening, 'the listener to close');
      inFlight.forEach((started, i) => started.request.end(records(i).slice(5)));
      for (const started of inFlight) {
        const finished = await started.answer;
        expect(finished.status).toBe(200);
        expect(JSON.parse(finished.text)).toMatchObject({ accepted: 1 });
      }
      // The next requests on the same connections: a route of the host's own, and /query.
      const answers = [
        await connections[0].send('GET', '/health/ready'),
        await connections[1].send('POST', '/query', json, query),
      ];
      for (const answer of answers) {
        expect(answer.reusedSocket).toBe(true);
        expect(answer.status).toBe(503);
        expect(answer.headers.connection).toBe('close');
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        const requestId = answer.headers['x-request-id'];
        expect(JSON.parse(answer.text)).toEqual({
          errors: [
            {
              message: 'The service is shutting down: retry shortly',
              extensions: {
                code: 'SERVICE_UNAVAILABLE',
                category: 'UNAVAILABLE',
                http_status: 503,
                request_id: requestId,
                timestamp: expect.any(String),
              },
            },
          ],
        });
      }
      await closing;
    } finally {
      for (const connection of connections) connection.agent.destroy();
      if (closing) await closing.catch(() => undefined);
      else await t.app.close();
      await t.db.drop();
    }
  });
});
