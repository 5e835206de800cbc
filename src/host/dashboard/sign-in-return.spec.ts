import type { FastifyRequest } from 'fastify';
import { returnPathOf, safeReturnPath, signInPath } from './sign-in-return';

const request = (method: string, url: string, headers: Record<string, string> = {}) =>
  ({ method, url, headers: { host: 'dash.example', ...headers } }) as unknown as FastifyRequest;

describe('the page signing in leads back to', () => {
  it.each([
    ['/dashboard/spaces', '/dashboard/spaces'],
    ['/dashboard/spaces/3/members', '/dashboard/spaces/3/members'],
    ['/dashboard/spaces/1?sprint=2&address=0xab', '/dashboard/spaces/1?sprint=2&address=0xab'],
    ['/dashboard/spaces/../audit', '/dashboard/audit'],
  ])('keeps %s as %s', (value, kept) => {
    expect(safeReturnPath(value)).toBe(kept);
  });

  it.each([
    ['another site', 'https://evil.example/dashboard/spaces'],
    ['a protocol-relative address', '//evil.example/dashboard/spaces'],
    ['a backslash some browsers read as a slash', '/dashboard\\..\\..\\evil.example'],
    ['a path climbing out', '/dashboard/../../query'],
    ['an encoded climb', '/dashboard/%2e%2e/query'],
    ['a page outside the dashboard', '/settings/audit'],
    ['the dashboard root', '/dashboard'],
    ['the sign-in page', '/dashboard/sign-in?next=/dashboard/spaces'],
    ['the sign-out form', '/dashboard/sign-out'],
    ['an invitation secret', '/dashboard/invitations/abc'],
    ['a file', '/dashboard/assets/dashboard.js'],
    ['a new line', '/dashboard/spaces\nLocation: https://evil.example'],
    ['a tab', '/dashboard/spa\tces'],
    ['a control character', '/dashboard/spaces\u0001'],
    ['a javascript: address', 'javascript:alert(1)'],
    ['no string', ['/dashboard/spaces']],
    ['a long address', `/dashboard/spaces?${'a'.repeat(2001)}`],
  ])('refuses %s', (_label, value) => {
    expect(safeReturnPath(value)).toBeUndefined();
  });

  it("takes a page's own address for a GET, and the form's page from this host for a POST", () => {
    expect(returnPathOf(request('GET', '/dashboard/spaces/2?sprint=5'))).toBe(
      '/dashboard/spaces/2?sprint=5',
    );
    const post = (referer?: string) =>
      returnPathOf(
        request('POST', '/dashboard/spaces/2/invitations', referer ? { referer } : undefined),
      );
    expect(post('http://dash.example/dashboard/spaces/2/members')).toBe(
      '/dashboard/spaces/2/members',
    );
    expect(post('https://evil.example/dashboard/spaces/2/members')).toBeUndefined();
    expect(post('not an address')).toBeUndefined();
    expect(post()).toBeUndefined();
  });

  it('names the page in the sign-in address, except home', () => {
    expect(signInPath(undefined)).toBe('/dashboard/sign-in');
    expect(signInPath('/dashboard/settings')).toBe('/dashboard/sign-in');
    expect(signInPath('/dashboard/spaces/1?sprint=2')).toBe(
      '/dashboard/sign-in?next=%2Fdashboard%2Fspaces%2F1%3Fsprint%3D2',
    );
  });
});
