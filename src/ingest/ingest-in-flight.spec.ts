import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { addRouteHooks } from '../http/route-hooks';
import { trackIngestRequests } from './ingest-in-flight';

describe('trackIngestRequests', () => {
  let app: FastifyInstance;
  let inFlight: number;
  // The reply is wrapped: a FastifyReply is a thenable, which a promise would wait for.
  let gate: { reached: Promise<{ reply: FastifyReply }>; open(): void };

  beforeEach(async () => {
    inFlight = 0;
    const runner = {
      enterRequest: () => {
        inFlight++;
        let left = false;
        return () => {
          if (!left) inFlight--;
          left = true;
        };
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
