import type { FastifyRequest } from 'fastify';
import type { DashboardSession, SessionsService } from './accounts/sessions.service';
import { DashboardAuth } from './dashboard-auth.service';

describe("a request's session", () => {
  it('is read once per request, and again after a failed read', async () => {
    const found: Array<string | undefined> = [];
    let fail = true;
    const sessions = {
      find: (cookie: string | undefined) => {
        found.push(cookie);
        if (fail) return Promise.reject(new Error('database gone'));
        return Promise.resolve({ sessionHash: 'h' } as DashboardSession);
      },
    } as unknown as SessionsService;
    const auth = new DashboardAuth(sessions);
    const request = { headers: { cookie: 'lb_session=abc' } } as FastifyRequest;
    await expect(auth.sessionOf(request)).rejects.toThrow('database gone');
    fail = false;
    const first = await auth.sessionOf(request);
    expect(await auth.sessionOf(request)).toBe(first);
    expect(found).toEqual(['abc', 'abc']);
    // Another request reads its own.
    await auth.sessionOf({ headers: { cookie: 'lb_session=def' } } as FastifyRequest);
    expect(found).toEqual(['abc', 'abc', 'def']);
  });
});
