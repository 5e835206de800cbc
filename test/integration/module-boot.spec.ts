import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { DynamicModule, INestApplication, LoggerService, Module, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  AccessTokenGuard,
  LOYALTY_ENTITIES,
  LOYALTY_MIGRATIONS,
  LoyaltyModule,
  type LoyaltyModuleOptions,
  SpacesService,
} from '../../src';
import {
  createTestDatabase,
  DB_KINDS,
  hostConnection,
  TestDatabase,
} from '../utils/test-databases';

/** A resolver of the host's own, guarded by the module's guard. */
@Resolver()
class HostResolver {
  @Query(() => String)
  @UseGuards(AccessTokenGuard)
  hostGreeting(): string {
    return 'hello';
  }
}

/** A host as the README shows it: the module applies the migrations, TypeORM does not. */
@Module({})
class ReplicaHost {
  static on(
    database: TestDatabase,
    options: LoyaltyModuleOptions,
    typeormMigrationsRun = false,
  ): DynamicModule {
    return {
      module: ReplicaHost,
      imports: [
        TypeOrmModule.forRoot({
          ...hostConnection(database),
          autoLoadEntities: true,
          migrations: LOYALTY_MIGRATIONS,
          migrationsRun: typeormMigrationsRun,
          // A failure is the test's answer, not something to retry for half a minute.
          retryAttempts: 0,
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
        LoyaltyModule.forRoot(options),
      ],
      providers: [HostResolver],
    };
  }
}

/** What a host's logger was told: level, message and context (the last argument). */
class CapturingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string; context?: string }> = [];
  private push(level: string, message: unknown, rest: unknown[]) {
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    this.lines.push({
      level,
      message: String(message instanceof Error ? message.stack : message),
      ...(typeof context === 'string' ? { context } : {}),
    });
  }
  log = (message: unknown, ...rest: unknown[]) => this.push('log', message, rest);
  warn = (message: unknown, ...rest: unknown[]) => this.push('warn', message, rest);
  error = (message: unknown, ...rest: unknown[]) => this.push('error', message, rest);
  debug = (message: unknown, ...rest: unknown[]) => this.push('debug', message, rest);
  verbose = () => undefined;
}

async function startHost(
  database: TestDatabase,
  options: LoyaltyModuleOptions = { migrationsRun: true },
  logger: LoggerService | false = false,
): Promise<INestApplication> {
  const app = await NestFactory.create(ReplicaHost.on(database, options), new ExpressAdapter(), {
    logger,
    abortOnError: false,
  });
  await app.init();
  return app;
}

async function appliedMigrations(app: INestApplication): Promise<string[]> {
  const rows: Array<{ name: string }> = await app
    .get<DataSource>(getDataSourceToken())
    .query('SELECT name FROM migrations ORDER BY id');
  return rows.map((row) => row.name);
}

const ALL = LOYALTY_MIGRATIONS.map((migration) => migration.name);

describe.each(DB_KINDS)('replicas of a module host on %s', (kind) => {
  let database: TestDatabase;
  let apps: INestApplication[] = [];
  beforeEach(async () => {
    database = await createTestDatabase(kind);
  });
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()));
    apps = [];
    await database.drop();
  });

  it('start together on a fresh database: one applies each migration once, all serve', async () => {
    apps = await Promise.all([0, 1, 2].map(() => startHost(database)));
    expect(await appliedMigrations(apps[0])).toEqual(ALL);
    for (const app of apps) {
      await expect(app.get(SpacesService).findSpace(1)).resolves.toBeNull();
    }
  });

  it('start together on a half-migrated database and finish it once', async () => {
    const first = LOYALTY_MIGRATIONS.slice(0, 4);
    const partial = new DataSource({
      ...hostConnection(database),
      entities: LOYALTY_ENTITIES,
      migrations: first,
    });
    await partial.initialize();
    await partial.runMigrations();
    await partial.destroy();

    apps = await Promise.all([0, 1, 2].map(() => startHost(database)));
    expect(await appliedMigrations(apps[0])).toEqual(ALL);
  });

  it('leave the schema alone without migrationsRun', async () => {
    const app = await startHost(database, { migrationsRun: false });
    apps = [app];
    const tables = await app
      .get<DataSource>(getDataSourceToken())
      .query(
        kind === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'spaces'"
          : kind === 'postgres'
            ? "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'spaces'"
            : "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'spaces'",
      );
    expect(tables).toEqual([]);
  });

  it('warn of TypeORM migrationsRun, which takes no lock', async () => {
    const logger = new CapturingLogger();
    const app = await NestFactory.create(
      ReplicaHost.on(database, { migrationsRun: false }, true),
      new ExpressAdapter(),
      { logger },
    );
    apps = [app];
    await app.init();
    expect(logger.lines).toContainEqual({
      level: 'warn',
      context: 'LoyaltyModule',
      message: expect.stringContaining(
        'The TypeORM data source has migrationsRun: true, which applies migrations with no lock',
      ),
    });
  });
});

describe('module options', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(() => database.drop());

  it('that cannot work stop the host at boot, each named', async () => {
    const refused = NestFactory.create(
      ReplicaHost.on(database, {
        cursorSecret: 'too-short',
        ingestMaxRecords: 0,
        rankIndex: { maxEntries: -1 },
        readReplicas: [{ host: 'replica', user: '', database: 'loyalty', tls: 'on' as never }],
      }),
      new ExpressAdapter(),
      { logger: false, abortOnError: false },
    );
    await expect(refused).rejects.toThrow(
      'LoyaltyModule options refused: cursorSecret has 9 characters: give at least 32, the same ' +
        'on every instance, or leave it out to have one generated and kept in the database; ' +
        'ingestMaxRecords must be a whole number from 1 to 100000, not 0; rankIndex.maxEntries ' +
        'must be a whole number from 0 to 1000000000, not -1; readReplicas[0].user must be a ' +
        'non-empty string; readReplicas[0].tls must be one of disable, require, verify-full, not "on".',
    );
  });
});

describe('a refused request in a host', () => {
  let database: TestDatabase;
  let app: INestApplication;
  const logger = new CapturingLogger();
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    app = await NestFactory.create(
      ReplicaHost.on(database, { migrationsRun: true }),
      new ExpressAdapter(),
      { logger },
    );
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
  });

  it("is logged as a refusal at debug level, never as an error with a stack, on the module's resolvers and the host's", async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const codes = [];
    for (const [query, headers] of [
      ['{ space(id: 1) { id } }', {}],
      ['{ hostGreeting }', { 'access-token': 'not-a-token' }],
    ] as const) {
      const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
      const body = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
      codes.push(body.errors[0].extensions.code);
    }
    expect(codes).toEqual(['TOKEN_REQUIRED', 'INVALID_TOKEN']);
    // Nest's logger is process-wide: lines of this file's other hosts may land here too, so the
    // check is on what these requests could have logged.
    const contexts = new Set(['ExceptionsHandler', 'AccessTokenGuard']);
    expect(logger.lines.filter((line) => contexts.has(line.context ?? ''))).toEqual([
      {
        level: 'debug',
        context: 'AccessTokenGuard',
        message: 'Refused request POST /graphql: TOKEN_REQUIRED, Access token is required',
      },
      {
        level: 'debug',
        context: 'AccessTokenGuard',
        message: 'Refused request POST /graphql: INVALID_TOKEN, Invalid access token',
      },
    ]);
  });
});
