import { Logger } from '@nestjs/common';
import Fastify, { FastifyInstance } from 'fastify';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DashboardSession } from './accounts/sessions.service';
import {
  installUploadRoute,
  MAX_UPLOADS_IN_FLIGHT,
  MAX_UPLOADS_PER_SPACE,
  UPLOAD_BODY_LIMIT,
  UPLOAD_ROUTE,
  UploadRouteServices,
  UploadsInFlight,
} from './points-upload-route';
import { html } from './views/html';

/** A session of `account`, who may upload to the spaces `editable`. */
const sessionOf = (account: string, editable: number[] = [3]) =>
  ({
    adminId: account,
    email: `${account}@example.com`,
    access: { can: (_action: string, spaceId: number) => editable.includes(spaceId) },
  }) as unknown as DashboardSession;

const pages: Omit<UploadRouteServices, 'sessionOf'> = {
  busyPage: (_session, path, busy) => html`<main><p role="alert">${busy} ${path}</p></main>`,
  // As the uploads page refuses: a space the account sees but may not edit is 403, others 404.
  uploadRefusal: (session, id) =>
    Promise.resolve(
      session.access.can('space.edit', Number(id))
        ? null
        : { status: 404, page: html`<main><p role="alert">Space not found.</p></main>` },
    ),
};

describe('uploads in flight', () => {
  it('holds one upload an account, MAX_UPLOADS_PER_SPACE a space, MAX_UPLOADS_IN_FLIGHT in all', () => {
    const inFlight = new UploadsInFlight();
    expect(MAX_UPLOADS_PER_SPACE).toBeLessThan(MAX_UPLOADS_IN_FLIGHT);
    expect(inFlight.take('a', 1)).toBeNull();
    expect(inFlight.take('a', 2)).toBe('account');
    expect(inFlight.take('b', 1)).toBeNull();
    expect(inFlight.take('c', 1)).toBe('space');
    expect(inFlight.take('c', 2)).toBeNull();
    expect(inFlight.take('d', 3)).toBeNull();
    expect(inFlight.take('e', 4)).toBe('instance');
    inFlight.release('a');
    expect(inFlight.take('e', 1)).toBeNull();
  });
});

describe('the uploads route', () => {
  let fastify: FastifyInstance;
  const inFlight = new UploadsInFlight(1);
  const bodiesRead: number[] = [];
  const warned: string[] = [];

  beforeAll(async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message) => {
      warned.push(String(message));
    });
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
        ...pages,
      },
      inFlight,
    );
    fastify.post(UPLOAD_ROUTE, (request, reply) => {
      bodiesRead.push(String(request.body).length);
      return reply.send({ limit: request.routeOptions.bodyLimit });
    });
    await fastify.ready();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await fastify.close();
  });

  const post = (cookie?: string, space = 3) =>
    fastify.inject({
      method: 'POST',
      url: `/dashboard/spaces/${space}/points/uploads?x=1`,
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

  it('answers an account that may not upload to the space with its 404, taking no place', async () => {
    warned.length = 0;
    const answer = await post('lb_session=viewer', 4);
    expect({ status: answer.statusCode, connection: answer.headers.connection }).toEqual({
      status: 404,
      connection: 'close',
    });
    expect(answer.body).toContain('Space not found.');
    expect(bodiesRead).toEqual([]);
    expect(warned).toEqual([
      'Upload to /dashboard/spaces/4/points/uploads refused before its body: viewer@example.com may not upload to space 4 (404)',
    ]);
    // No place was taken: the instance's one place is still free.
    expect(inFlight.take('probe', 3)).toBeNull();
    inFlight.release('probe');
  });

  it("reads an allowed account's upload within the raised limit, and frees its place after", async () => {
    const answer = await post('lb_session=a');
    expect(answer.json()).toEqual({ limit: UPLOAD_BODY_LIMIT });
    expect(bodiesRead).toEqual(['address,points'.length]);
    expect(inFlight.take('b', 3)).toBeNull();
    warned.length = 0;
    const busy = await post('lb_session=c');
    expect({ status: busy.statusCode, retry: busy.headers['retry-after'] }).toEqual({
      status: 503,
      retry: '10',
    });
    expect(busy.body).toContain('instance /dashboard/spaces/3/points/uploads<');
    expect((await post('lb_session=b')).statusCode).toBe(429);
    expect(bodiesRead).toHaveLength(1);
    expect(warned).toEqual([
      'Upload to /dashboard/spaces/3/points/uploads refused before its body: c@example.com: no place (instance busy)',
      'Upload to /dashboard/spaces/3/points/uploads refused before its body: b@example.com: no place (account busy)',
    ]);
    inFlight.release('b');
  });
});

/**
 * Sends `account`'s upload of `length` bytes to a listening route with `rate`, `chunk` every
 * `everyMs` after the headers, until the server closes the connection: answers how long that took
 * and what the route logged, with the route's places.
 */
async function trickleUpload(
  account: string,
  rate: { windowMs: number; minBytes: number; deadlineMs: number },
  length: number,
  chunk: string,
  everyMs: number,
): Promise<{ ms: number; warned: string[]; inFlight: UploadsInFlight }> {
  const inFlight = new UploadsInFlight(1);
  const fastify = Fastify();
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  installUploadRoute(
    fastify,
    { sessionOf: () => Promise.resolve(sessionOf(account)), ...pages },
    inFlight,
    rate,
  );
  fastify.post(UPLOAD_ROUTE, (_request, reply) => reply.send('read'));
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
  try {
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /dashboard/spaces/3/points/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n`,
    );
    const trickle = setInterval(() => socket.write(chunk), everyMs);
    const started = Date.now();
    await once(socket, 'close');
    clearInterval(trickle);
    const ms = Date.now() - started;
    // The server lets the place go as it sees the connection close.
    for (let i = 0; i < 50 && inFlight.take('probe', 3) !== null; i++) await sleep(20);
    inFlight.release('probe');
    return { ms, warned: warn.mock.calls.map(([message]) => String(message)), inFlight };
  } finally {
    warn.mockRestore();
    await fastify.close();
  }
}

describe('an upload that trickles', () => {
  it('is cut off once a window brings too few bytes, and its place is free again', async () => {
    // Headers, then a byte now and then: never idle, far too slow.
    const { ms, warned, inFlight } = await trickleUpload(
      'slow',
      { windowMs: 300, minBytes: 64, deadlineMs: 60_000 },
      1000,
      'a',
      50,
    );
    expect(ms).toBeLessThan(5_000);
    expect(inFlight.take('another', 3)).toBeNull();
    expect(warned).toEqual([
      expect.stringMatching(
        /^Upload to \/dashboard\/spaces\/3\/points\/uploads cut off: slow@example\.com sent \d+ bytes in 300 ms$/,
      ),
    ]);
  });
});

describe('an upload that keeps a steady trickle', () => {
  it('is cut off at the deadline for its whole body', async () => {
    // Fast enough for every window, never done.
    const { ms, warned } = await trickleUpload(
      'steady',
      { windowMs: 100, minBytes: 1, deadlineMs: 600 },
      100_000,
      'aaaa',
      20,
    );
    expect(ms).toBeGreaterThanOrEqual(500);
    expect(warned).toEqual([
      'Upload to /dashboard/spaces/3/points/uploads cut off: steady@example.com had not sent the whole body after 600 ms',
    ]);
  });
});

describe('an upload while sessions cannot be read', () => {
  it('is refused with a 503 page naming no server, before its body is read', async () => {
    const fastify = Fastify();
    const read: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    installUploadRoute(fastify, {
      sessionOf: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:3306')),
      ...pages,
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
        type: answer.headers['content-type'],
      }).toEqual({
        status: 503,
        connection: 'close',
        retry: '10',
        type: expect.stringMatching(/^text\/html/),
      });
      expect(answer.body).toContain('Send it again in a few seconds');
      expect(answer.body).not.toContain('10.0.0.7');
      expect(read).toEqual([]);
      // The cause is for the operator's log.
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('ECONNREFUSED 10.0.0.7:3306'));
    } finally {
      warn.mockRestore();
      await fastify.close();
    }
  });
});
