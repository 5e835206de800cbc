import Fastify, { FastifyInstance } from 'fastify';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DashboardSession } from './accounts/sessions.service';
import {
  installUploadRoute,
  MAX_UPLOADS_IN_FLIGHT,
  UPLOAD_BODY_LIMIT,
  UPLOAD_ROUTE,
  UploadsInFlight,
} from './points-upload-route';
import { html } from './views/html';

const sessionOf = (hash: string) => ({ sessionHash: hash }) as DashboardSession;

describe('uploads in flight', () => {
  it('holds one upload a session and MAX_UPLOADS_IN_FLIGHT in all, until each is released', () => {
    const inFlight = new UploadsInFlight();
    const hashes = Array.from({ length: MAX_UPLOADS_IN_FLIGHT }, (_, i) => `s${i}`);
    expect(hashes.map((hash) => inFlight.take(hash))).toEqual(hashes.map(() => null));
    expect(inFlight.take('s0')).toBe('session');
    expect(inFlight.take('another')).toBe('instance');
    inFlight.release('s1');
    expect(inFlight.take('another')).toBeNull();
    expect(inFlight.take('s1')).toBe('instance');
  });
});

describe('the uploads route', () => {
  let fastify: FastifyInstance;
  const inFlight = new UploadsInFlight(1);
  const bodiesRead: number[] = [];

  beforeAll(async () => {
    fastify = Fastify();
    installUploadRoute(
      fastify,
      {
        sessionOf: (request) => {
          const cookie = request.headers.cookie ?? '';
          return Promise.resolve(
            cookie.startsWith('lb_session=') ? sessionOf(cookie.slice(11)) : null,
          );
        },
        busyPage: (_session, path, busy) => html`<main><p role="alert">${busy} ${path}</p></main>`,
      },
      inFlight,
    );
    fastify.post(UPLOAD_ROUTE, (request, reply) => {
      bodiesRead.push(String(request.body).length);
      return reply.send({ limit: request.routeOptions.bodyLimit });
    });
    await fastify.ready();
  });
  afterAll(() => fastify.close());

  const post = (cookie?: string) =>
    fastify.inject({
      method: 'POST',
      url: '/dashboard/spaces/3/points/uploads?x=1',
      headers: { 'content-type': 'text/plain', ...(cookie ? { cookie } : {}) },
      payload: 'address,points',
    });

  it('sends whoever is not signed in to sign in, on a closed connection, its body unread', async () => {
    const answer = await post();
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/dashboard/sign-in');
    expect(answer.headers.connection).toBe('close');
    expect(String(answer.headers['set-cookie'])).toMatch(/lb_notice=session-ended/);
    expect(bodiesRead).toEqual([]);
  });

  it("reads a signed-in session's upload within the raised limit, and frees its place after", async () => {
    const answer = await post('lb_session=a');
    expect(answer.json()).toEqual({ limit: UPLOAD_BODY_LIMIT });
    expect(bodiesRead).toEqual(['address,points'.length]);
    expect(inFlight.take('b')).toBeNull();
    const busy = await post('lb_session=c');
    expect({ status: busy.statusCode, retry: busy.headers['retry-after'] }).toEqual({
      status: 503,
      retry: '10',
    });
    expect(busy.body).toContain('instance /dashboard/spaces/3/points/uploads<');
    expect((await post('lb_session=b')).statusCode).toBe(429);
    expect(bodiesRead).toHaveLength(1);
    inFlight.release('b');
  });
});

describe('an upload that stops sending', () => {
  it('is cut off after the idle time, and its place is free again', async () => {
    const inFlight = new UploadsInFlight(1);
    const fastify = Fastify();
    installUploadRoute(
      fastify,
      {
        sessionOf: () => Promise.resolve(sessionOf('slow')),
        busyPage: (_session, path, busy) => html`<p>${busy} ${path}</p>`,
      },
      inFlight,
      200,
    );
    fastify.post(UPLOAD_ROUTE, (_request, reply) => reply.send('read'));
    const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = new URL(address);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      // Headers and a first part of a 1,000-byte body, then nothing.
      socket.write(
        `POST /dashboard/spaces/3/points/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\naddress,points\n`,
      );
      const started = Date.now();
      await once(socket, 'close');
      expect(Date.now() - started).toBeLessThan(5_000);
      // The server lets the place go as it sees the connection close.
      for (let i = 0; i < 50 && inFlight.take('another') !== null; i++) await sleep(20);
      expect(inFlight.take('another')).toBe('session');
    } finally {
      await fastify.close();
    }
  });
});

describe('an upload while sessions cannot be read', () => {
  it('is refused with 503 before its body is read, on a closed connection', async () => {
    const fastify = Fastify();
    const read: string[] = [];
    installUploadRoute(fastify, {
      sessionOf: () => Promise.reject(new Error('Database unavailable')),
      busyPage: (_session, path, busy) => html`<p>${busy} ${path}</p>`,
    });
    fastify.post(UPLOAD_ROUTE, (request, reply) => {
      read.push(String(request.body));
      return reply.send('read');
    });
    await fastify.ready();
    try {
      const answer = await fastify.inject({
        method: 'POST',
        url: '/dashboard/spaces/3/points/uploads',
        headers: { 'content-type': 'text/plain', cookie: 'lb_session=a' },
        payload: 'address,points',
      });
      expect({
        status: answer.statusCode,
        connection: answer.headers.connection,
        retry: answer.headers['retry-after'],
      }).toEqual({ status: 503, connection: 'close', retry: '10' });
      expect(answer.body).toContain('Try again shortly');
      expect(read).toEqual([]);
    } finally {
      await fastify.close();
    }
  });
});
