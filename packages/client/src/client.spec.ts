import { createClient, endpointUrl } from './client.js';
import { LoyaltyApiError } from './errors.js';

describe('the endpoint option', () => {
  /** A fetch that records where it was sent and answers one space. */
  function recording() {
    const urls: string[] = [];
    const fetch = ((url: string | URL | Request) => {
      urls.push(typeof url === 'string' ? url : url instanceof URL ? url.href : url.url);
      const data = { space: { id: '1', name: 'One', description: null } };
      return Promise.resolve(new Response(JSON.stringify({ data }), { status: 200 }));
    }) as typeof globalThis.fetch;
    return { urls, fetch };
  }

  it.each([
    'http://localhost:3000/query',
    'https://api.example.com/graphql',
    'https://api.example.com/v2/graphql/',
    'https://api.example.com/graphql?tenant=7',
  ])('is used as given, path included: %s', async (endpoint) => {
    const { urls, fetch } = recording();
    await createClient({ endpoint, token: 't', fetch }).space(1);
    expect(urls).toEqual([new URL(endpoint).href]);
  });

  it.each([
    [undefined, /endpoint is required/],
    ['', /endpoint is required/],
    ['/query', /not an absolute URL/],
    ['loyalty.example.com/query', /not an absolute URL/],
    ['localhost:3000/query', /must be an http or https URL/],
    ['ftp://example.com/query', /must be an http or https URL/],
    ['https://user:secret@example.com/query', /must not contain a user name or password/],
  ])('refuses %p with a clear error', (endpoint, message) => {
    const error = (() => {
      try {
        endpointUrl(endpoint);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LoyaltyApiError);
    expect(error).toMatchObject({
      code: 'INVALID_ENDPOINT',
      message: expect.stringMatching(message),
    });
    expect(() => createClient({ endpoint: endpoint as string, token: 't' })).toThrow(message);
  });

  it('hints at the path when the server answers 404 without a GraphQL result', async () => {
    const fetch = (() =>
      Promise.resolve(new Response('Not Found', { status: 404 }))) as typeof globalThis.fetch;
    const client = createClient({ endpoint: 'http://localhost:3000', token: 't', fetch });
    await expect(client.space(1)).rejects.toMatchObject({
      code: 'BAD_RESPONSE',
      message: expect.stringContaining('is http://localhost:3000/ the GraphQL endpoint?'),
    });
  });
});
