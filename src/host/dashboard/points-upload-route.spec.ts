import Fastify, { FastifyInstance } from 'fastify';
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
