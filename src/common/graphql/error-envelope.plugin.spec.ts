import { ApolloServer, ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ErrorCode } from '../errors/error-code';
import { LoyaltyException } from '../errors/loyalty.exception';
import { ErrorEnvelopePlugin } from './error-envelope.plugin';
import { formatLoyaltyError } from './format-error';

// The plugin's declaration names no @apollo/server type, so that it is a plugin to CommonJS and
// ES-module hosts alike, which see Apollo's two sets of declarations; this checks the CommonJS one.
const plugins: ApolloServerPlugin<BaseContext>[] = [new ErrorEnvelopePlugin()];

const typeDefs = 'type Query { fine: String, missing: String, refused: String }';
const resolvers = {
  Query: {
    fine: () => 'ok',
    missing: () => {
      throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    },
    refused: () => {
      throw new LoyaltyException(ErrorCode.TOKEN_REQUIRED);
    },
  },
};

describe('ErrorEnvelopePlugin', () => {
  const server = new ApolloServer<BaseContext>({
    typeDefs,
    resolvers,
    plugins,
    formatError: formatLoyaltyError,
  });
  beforeAll(() => server.start());
  afterAll(() => server.stop());

  const run = async (query: string) => {
    const response = await server.executeOperation(
      { query },
      { contextValue: { req: { id: 'req-7', headers: {} } } },
    );
    if (response.body.kind !== 'single') throw new Error('not a single result');
    return { status: response.http.status, result: response.body.singleResult };
  };

  it('adds the request id to every error, and gives a 401 error its status', async () => {
    const { status, result } = await run('{ fine missing refused }');
    expect(status).toBe(401);
    expect(result.data).toEqual({ fine: 'ok', missing: null, refused: null });
    expect(result.errors?.map((error) => error.extensions)).toEqual([
      expect.objectContaining({ code: 'SPACE_NOT_FOUND', http_status: 200, request_id: 'req-7' }),
      expect.objectContaining({ code: 'TOKEN_REQUIRED', http_status: 401, request_id: 'req-7' }),
    ]);
    // The timestamp stays last, after the request id.
    expect(Object.keys(result.errors?.[0].extensions ?? {}).slice(-2)).toEqual([
      'request_id',
      'timestamp',
    ]);
  });

  it('leaves the status of an answer whose errors are 200s alone', async () => {
    const { status, result } = await run('{ missing }');
    expect(status).toBeUndefined();
    expect(result.errors?.[0].extensions).toMatchObject({ request_id: 'req-7' });
  });

  it('leaves an answer without errors as it is', async () => {
    const { status, result } = await run('{ fine }');
    expect(status).toBeUndefined();
    expect(result).toEqual({ data: { fine: 'ok' } });
  });
});
