import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Args, GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import {
  AccessTokensService,
  IngestService,
  LOYALTY_MIGRATIONS,
  LoyaltyModule,
  SpacesService,
} from '../../src';
import { parseRecord } from '../../src/records/ingest-record';

/** A resolver of the host's own, beside the module's. */
@Resolver()
class GreetingResolver {
  constructor(private readonly spaces: SpacesService) {}

  @Query(() => String)
  async greeting(@Args('spaceId') spaceId: number): Promise<string> {
    const space = await this.spaces.findSpace(spaceId);
    return `Welcome to ${space?.name ?? 'nowhere'}`;
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: ':memory:',
      autoLoadEntities: true,
      migrations: LOYALTY_MIGRATIONS,
      migrationsRun: true,
    }),
    GraphQLModule.forRoot<ApolloDriverConfig>({
      driver: ApolloDriver,
      path: '/graphql',
      autoSchemaFile: true,
      context: (req: unknown) => ({ req }),
    }),
    LoyaltyModule.forRootAsync({
      useFactory: () => ({ cursorSecret: 'host-secret-host-secret-host-secret-0001' }),
    }),
  ],
  providers: [GreetingResolver],
})
class HostModule {}

describe('the module inside another application', () => {
  let app: NestFastifyApplication;
  let url: string;
  let token: string;

  const post = async (query: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data: any; errors: Array<Record<string, any>> };
  };

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(HostModule, new FastifyAdapter(), {
      logger: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/graphql`;
    token = (await app.get(AccessTokensService).create('host')).token;
    const records = [
      { type: 'space', id: 1, name: 'Host space' },
      {
        type: 'points',
        key: 'h1',
        spaceId: 1,
        address: '0xH',
        points: 3,
        occurredAt: '2026-01-01T00:00:00Z',
      },
    ].map((r) => {
      const parsed = parseRecord(r);
      if (!parsed.ok) throw new Error(parsed.reason);
      return parsed.record;
    });
    await app.get(IngestService).applyRecords(records);
  });
  afterAll(() => app?.close());

  it("serves the module's queries next to the host's own resolver, which uses a module service", async () => {
    const body = await post(
      '{ greeting(spaceId: 1) space(id: 1) { name loyaltyPointsRanks { totalCount list { rank points } } } }',
      {
        'access-token': token,
      },
    );
    expect(body).toEqual({
      data: {
        greeting: 'Welcome to Host space',
        space: {
          name: 'Host space',
          loyaltyPointsRanks: { totalCount: 1, list: [{ rank: 1, points: 3 }] },
        },
      },
    });
  });

  it("guards the module's resolvers without guarding the host's", async () => {
    const body = await post('{ greeting(spaceId: 1) space(id: 1) { name } }');
    expect(body.data).toEqual({ greeting: 'Welcome to Host space', space: null });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({
      message: 'Access token is required',
      path: ['space'],
      extensions: { code: 'TOKEN_REQUIRED', category: 'AUTHENTICATION', http_status: 401 },
    });
  });
});
