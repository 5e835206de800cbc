import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { addRouteHooks } from './route-hooks';
import { trackIngestRequests } from './ingest-in-flight';

describe('trackIngestRequests', () => {
  let app: FastifyInstance;
  let inFlight: number;
  /** The connection of each request entered, and the connections reported gone. */
  let clients: object[];
  let gone: object[];
  // The reply is wrapped: a FastifyReply is a thenable, which a promise would wait for.
  let gate: { reached: Promise<{ reply: FastifyReply }>; open(): void };

  beforeEach(async () => {
    inFlight = 0;
    // This test's own: an earlier test's connections may close meanwhile.
    const [entered, closed]: object[][] = [[], []];
    [clients, gone] = [entered, closed];
    const runner = {
      enterRequest: (client?: object) => {
        if (client) entered.push(client);
        inFlight++;
        let left = false;
        return () => {
          if (!left) inFlight--;
          left = true;
        };
      },
      clientGone: (client: object) => {
        closed.push(client);
      },
    };
    let reach!: (reached: { reply: FastifyReply }) => void;
    let open!: () => void;
    const reached = new Promise<{ reply: FastifyReply }>((resolve) => (reach = resolve));
    const opened = new Promise<void>((resolve) => (open = resolve));
    gate = { reached, open };
    app = Fastify();
    // A gate that awaits, as the token lookup does, registered first as in createApp.
    addRouteHooks(
      app,
      'gate',
      { path: '/ingest' },
      {
        onRequest: async (_request: unknown, reply: FastifyReply) => {
          reach({ reply });
          await opened;
        },
      },
    );
    trackIngestRequests(app, '/ingest', runner);
    app.post('/ingest', () => Promise.resolve({ inFlight }));
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(() => app.close());

  const url = () => {
    const address = app.server.address() as { port: number };
    return `http://127.0.0.1:${address.port}/ingest`;
  };

  it('counts a request from past the gate until it is answered', async () => {
    const answer = fetch(url(), {
      method: 'POST',
      body: '[]',
      headers: { 'content-type': 'application/json' },
    });
    await gate.reached;
    expect(inFlight).toBe(0);
    gate.open();
    expect(await (await answer).json()).toEqual({ inFlight: 1 });
    for (let i = 0; i < 50 && inFlight > 0; i++) await sleep(10);
    expect(inFlight).toBe(0);
  });

  it('passes the connection of each request, the same for a kept-alive one, and its close', async () => {
    gate.open();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = () =>
      new Promise<void>((resolve, reject) => {
        const client = request(url(), {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json' },
        });
        client.on('error', reject);
        client.on('response', (response) => response.resume().on('end', resolve));
        client.end('[]');
      });
    await post();
    await post();
    expect(clients).toHaveLength(2);
    expect(clients[1]).toBe(clients[0]);
    expect(gone).toEqual([]);
    agent.destroy();
    for (let i = 0; i < 50 && gone.length === 0; i++) await sleep(10);
    expect(gone).toEqual([clients[0]]);
  });

  it('does not count a request whose client left while the gate awaited', async () => {
    const client = request(url(), { method: 'POST', headers: { 'content-length': '10' } });
    client.on('error', () => undefined);
    client.write('[');
    const { reply } = await gate.reached;
    client.destroy();
    for (let i = 0; i < 100 && !reply.raw.closed; i++) await sleep(10);
    expect(reply.raw.closed).toBe(true);
    gate.open();
    await sleep(50);
    expect(inFlight).toBe(0);
  });
});
