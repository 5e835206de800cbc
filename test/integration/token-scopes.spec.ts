import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Module, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { TypeOrmModule, TypeOrmModuleOptions } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import {
  AccessTokenGuard,
  AccessTokensService,
  ErrorEnvelopePlugin,
  formatLoyaltyError,
  IngestService,
  LOYALTY_MIGRATIONS,
  LoyaltyModule,
  RequiresScope,
  TokenScope,
} from '../../src';
import { parseRecord } from '../../src/records/ingest-record';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { hostDataSourceOptions } from '../../src/host/config/host-data-source';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';
import { scopeRefusal } from '../utils/test-app';

/** A host's own resolver that needs the `ingest` scope, through the module's guard. */
@Resolver()
class IngestProbeResolver {
  @Query(() => String, { nullable: true })
  @UseGuards(AccessTokenGuard)
  @RequiresScope('ingest')
  ingestProbe(): string {
    return 'ingest ok';
  }
}

function hostModule(typeorm: TypeOrmModuleOptions) {
  @Module({
    imports: [
      TypeOrmModule.forRoot(typeorm),
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        path: '/graphql',
        autoSchemaFile: true,
        context: (req: unknown) => ({ req }),
        formatError: formatLoyaltyError,
        plugins: [new ErrorEnvelopePlugin()],
        preserveHttpStatusForExecutionErrors: false,
      }),
      LoyaltyModule.forRoot({ cursorSecret: 'host-secret-host-secret-host-secret-0001' }),
    ],
    providers: [IngestProbeResolver],
  })
  class ScopedHostModule {}
  return ScopedHostModule;
}

/**
 * The resolver guard on its own, in a host without our /query gate: a token without the scope a
 * resolver needs is refused with 403 INSUFFICIENT_SCOPE in the envelope, and the response status
 * follows. The host's migrations are LOYALTY_MIGRATIONS alone (no dashboard tables).
 */
describe.each(DB_KINDS)('token scopes in a host application on %s', (kind) => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let url: string;
  const tokens: Partial<Record<'query' | 'ingest' | 'both', string>> = {};

  const post = async (query: string, token: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': token },
      body: JSON.stringify({ query }),
    });
    return {
      status: response.status,
      body: (await response.json()) as { data: any; errors?: Array<Record<string, any>> },
    };
  };

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
    app = await NestFactory.create<NestFastifyApplication>(
      hostModule({
        ...options,
        entities: [],
        autoLoadEntities: true,
        migrations: LOYALTY_MIGRATIONS,
        migrationsRun: true,
      }),
      new FastifyAdapter(),
      { logger: false },
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/graphql`;
    const service = app.get(AccessTokensService);
    const scopes: Record<keyof typeof tokens, TokenScope[]> = {
      query: ['query'],
      ingest: ['ingest'],
      both: ['query', 'ingest'],
    };
    for (const [name, granted] of Object.entries(scopes))
      tokens[name as keyof typeof tokens] = (await service.create(name, granted)).token;
    const parsed = parseRecord({ type: 'space', id: 1, name: 'Host space' });
    if (!parsed.ok) throw new Error(parsed.reason);
    await app.get(IngestService).applyRecords([parsed.record]);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const refusal = (scope: TokenScope, path: string) =>
    scopeRefusal(scope, { path: [path], locations: expect.any(Array) });

  it("lets a query token read the module's resolvers and refuses it the host's ingest one", async () => {
    expect(await post('{ space(id: 1) { name } }', tokens.query!)).toEqual({
      status: 200,
      body: { data: { space: { name: 'Host space' } } },
    });
    const refused = await post('{ ingestProbe }', tokens.query!);
    expect(refused.status).toBe(403);
    expect(refused.body.data).toEqual({ ingestProbe: null });
    expect(refused.body.errors).toEqual([refusal('ingest', 'ingestProbe')]);
  });

  it("refuses an ingest-only token the module's resolvers with 403, and lets it pass the ingest guard", async () => {
    const response = await post('{ space(id: 1) { name } ingestProbe }', tokens.ingest!);
    expect(response.status).toBe(403);
    expect(response.body.data).toEqual({ space: null, ingestProbe: 'ingest ok' });
    expect(response.body.errors).toEqual([refusal('query', 'space')]);
  });

  it('lets a token with both scopes through both guards', async () => {
    expect(await post('{ space(id: 1) { name } ingestProbe }', tokens.both!)).toEqual({
      status: 200,
      body: { data: { space: { name: 'Host space' }, ingestProbe: 'ingest ok' } },
    });
  });
});
