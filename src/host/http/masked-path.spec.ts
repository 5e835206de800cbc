import { hasSensitiveParam, maskedPath } from './masked-path';

describe('maskedPath', () => {
  it('drops the query string', () => {
    expect(maskedPath('/export', '/export?spaceId=1&format=csv', {})).toBe('/export');
    expect(maskedPath(undefined, '/nowhere?x=1', undefined)).toBe('/nowhere');
  });

  it('keeps ordinary parameters and masks credentials', () => {
    expect(maskedPath('/dashboard/teams/:id', '/dashboard/teams/7', { id: '7' })).toBe(
      '/dashboard/teams/7',
    );
    expect(
      maskedPath('/dashboard/invitations/:secret', '/dashboard/invitations/abc123SECRET?x=1', {
        secret: 'abc123SECRET',
      }),
    ).toBe('/dashboard/invitations/***');
    expect(
      maskedPath('/a/:id/reset/:resetToken', '/a/5/reset/tok', { id: '5', resetToken: 'tok' }),
    ).toBe('/a/5/reset/***');
  });

  it('says which routes carry a credential', () => {
    expect(hasSensitiveParam('/dashboard/invitations/:secret')).toBe(true);
    expect(hasSensitiveParam('/dashboard/spaces/:id/members/:accountId')).toBe(false);
    expect(hasSensitiveParam(undefined)).toBe(false);
  });
});
