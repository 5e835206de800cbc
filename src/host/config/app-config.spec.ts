import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './app-config';

const SECRET_32 = 'abcdefghijklmnopqrstuvwxyz012345';

function configErrorOf(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

describe('loadConfig', () => {
  describe('defaults', () => {
    it('gives safe defaults for an empty environment', () => {
      const config = loadConfig({});
      expect(config).toEqual({
        port: 3000,
        host: '0.0.0.0',
        databaseUrl: 'sqlite:./data/loyalty.sqlite',
        database: { kind: 'sqlite', file: resolve(process.cwd(), 'data', 'loyalty.sqlite') },
        databaseReplicas: [],
        databaseReplicaUrls: [],
        schemaProfile: 'extended',
        introspection: true,
        cursorSecret: undefined,
        migrateOnStart: true,
        nodeEnv: 'development',
        redisUrl: undefined,
        rateLimits: {
          token: [
            { name: '20/1s', limit: 20, ttlMs: 1000 },
            { name: '300/30s', limit: 300, ttlMs: 30_000 },
          ],
          address: [
            { name: '20/1s', limit: 20, ttlMs: 1000 },
            { name: '300/60s', limit: 300, ttlMs: 60_000 },
          ],
        },
        ingest: {
          rateLimits: [
            { name: '50/1s', limit: 50, ttlMs: 1000 },
            { name: '1000/60s', limit: 1000, ttlMs: 60_000 },
          ],
          maxRecords: 10_000,
          maxBodyBytes: 16_777_216,
        },
        boardExport: {
          rateLimits: [
            { name: '3/1m', limit: 3, ttlMs: 60_000 },
            { name: '30/1h', limit: 30, ttlMs: 3_600_000 },
          ],
          maxConcurrent: 2,
        },
        rankIndex: { maxEntries: 5_000_000 },
        responseCacheMs: 500,
        trustProxy: false,
        limits: {
          maxBodyBytes: 102_400,
          maxDepth: 10,
          maxAliases: 30,
          maxCost: 20_000,
          maxTokens: 5_000,
        },
        requestTimeoutMs: 10_000,
        graphqlIde: true,
        corsOrigins: [],
        logging: { level: 'info', format: 'auto' },
        metrics: { port: undefined, host: '0.0.0.0', token: undefined },
      });
    });

    it('uses the default database when DATABASE_URL is empty', () => {
      expect(loadConfig({ DATABASE_URL: '' }).database).toEqual({
        kind: 'sqlite',
        file: resolve(process.cwd(), 'data', 'loyalty.sqlite'),
      });
    });

    it('treats empty boolean settings and an empty CURSOR_SECRET as unset', () => {
      const config = loadConfig({
        STRICT_MODE: '',
        INTROSPECTION: '',
        MIGRATE_ON_START: '',
        CURSOR_SECRET: '',
      });
      expect(config).toMatchObject({
        schemaProfile: 'extended',
        introspection: true,
        migrateOnStart: true,
      });
      expect(config.cursorSecret).toBeUndefined();
    });

    it('does not read process.env when an environment is given', () => {
      const saved = process.env.PORT;
      process.env.PORT = 'not-a-port';
      try {
        expect(loadConfig({}).port).toBe(3000);
      } finally {
        if (saved === undefined) delete process.env.PORT;
        else process.env.PORT = saved;
      }
    });
  });

  describe('values', () => {
    it('reads every setting', () => {
      const config = loadConfig({
        PORT: '8080',
        HOST: '127.0.0.1',
        DATABASE_URL: 'mysql://app:pw@db:3307/loyalty',
        DATABASE_REPLICA_URLS:
          'mysql://ro:secret@replica-1/loyalty, mariadb://ro@replica-2:3308/loyalty',
        STRICT_MODE: 'true',
        INTROSPECTION: 'false',
        MIGRATE_ON_START: 'no',
        CURSOR_SECRET: SECRET_32,
        NODE_ENV: 'production',
        REDIS_URL: 'redis://cache:6379/2',
        RATE_LIMIT_TOKEN: '5/1s',
        RATE_LIMIT_ADDRESS: 'off',
        RATE_LIMIT_INGEST: '100/1s',
        INGEST_MAX_RECORDS: '2000',
        INGEST_MAX_BODY_BYTES: '1048576',
        RATE_LIMIT_EXPORT: '1/10s',
        EXPORT_MAX_CONCURRENT: '4',
        RANK_INDEX_MAX_ENTRIES: '0',
        RESPONSE_CACHE_MS: '0',
        TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
        MAX_BODY_BYTES: '2048',
        MAX_QUERY_DEPTH: '7',
        MAX_QUERY_ALIASES: '0',
        MAX_QUERY_COST: '500',
        MAX_QUERY_TOKENS: '900',
        REQUEST_TIMEOUT_MS: '2500',
        GRAPHQL_IDE: 'true',
        CORS_ORIGINS: 'https://a.example, http://localhost:8080',
        LOG_LEVEL: 'WARN',
        LOG_FORMAT: 'json',
        METRICS_PORT: '9464',
        METRICS_TOKEN: SECRET_32,
      });
      expect(config).toEqual({
        port: 8080,
        host: '127.0.0.1',
        databaseUrl: 'mysql://app:***@db:3307/loyalty',
        database: {
          kind: 'mysql',
          host: 'db',
          port: 3307,
          username: 'app',
          password: 'pw',
          database: 'loyalty',
        },
        databaseReplicas: [
          {
            kind: 'mysql',
            host: 'replica-1',
            port: 3306,
            username: 'ro',
            password: 'secret',
            database: 'loyalty',
          },
          {
            kind: 'mysql',
            host: 'replica-2',
            port: 3308,
            username: 'ro',
            password: '',
            database: 'loyalty',
          },
        ],
        databaseReplicaUrls: [
          'mysql://ro:***@replica-1/loyalty',
          'mariadb://ro@replica-2:3308/loyalty',
        ],
        schemaProfile: 'spec',
        introspection: false,
        cursorSecret: SECRET_32,
        migrateOnStart: false,
        nodeEnv: 'production',
        redisUrl: 'redis://cache:6379/2',
        rateLimits: { token: [{ name: '5/1s', limit: 5, ttlMs: 1000 }], address: [] },
        ingest: {
          rateLimits: [{ name: '100/1s', limit: 100, ttlMs: 1000 }],
          maxRecords: 2000,
          maxBodyBytes: 1_048_576,
        },
        boardExport: { rateLimits: [{ name: '1/10s', limit: 1, ttlMs: 10_000 }], maxConcurrent: 4 },
        rankIndex: { maxEntries: 0 },
        responseCacheMs: 0,
        trustProxy: ['10.0.0.0/8', '127.0.0.1'],
        limits: { maxBodyBytes: 2048, maxDepth: 7, maxAliases: 0, maxCost: 500, maxTokens: 900 },
        requestTimeoutMs: 2500,
        graphqlIde: true,
        corsOrigins: ['https://a.example', 'http://localhost:8080'],
        logging: { level: 'warn', format: 'json' },
        metrics: { port: 9464, host: '127.0.0.1', token: SECRET_32 },
      });
    });

    it('refuses replicas of a SQLite database, and a replica of another kind than the primary', () => {
      expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'mysql://ro@replica/db' })).toThrow(
        /DATABASE_REPLICA_URLS needs a database server in DATABASE_URL/,
      );
      expect(() =>
        loadConfig({
          DATABASE_URL: 'mysql://app@db/loyalty',
          DATABASE_REPLICA_URLS: 'sqlite:./copy.sqlite',
        }),
      ).toThrow(
        /DATABASE_REPLICA_URLS: sqlite:\.\/copy\.sqlite: a replica must be a server of the same kind/,
      );
      expect(() =>
        loadConfig({
          DATABASE_URL: 'postgres://app@db/loyalty',
          DATABASE_REPLICA_URLS: 'mysql://ro@replica/loyalty',
        }),
      ).toThrow(/mysql:\/\/ro@replica\/loyalty: a replica must be a server of the same kind/);
      expect(
        loadConfig({
          DATABASE_URL: 'postgresql://app@db/loyalty',
          DATABASE_REPLICA_URLS: 'postgres://ro:hush@replica:5433/loyalty',
        }).databaseReplicas,
      ).toEqual([
        {
          kind: 'postgres',
          host: 'replica',
          port: 5433,
          username: 'ro',
          password: 'hush',
          database: 'loyalty',
        },
      ]);
      expect(() =>
        loadConfig({
          DATABASE_URL: 'mysql://app@db/loyalty',
          DATABASE_REPLICA_URLS: 'mysql://ro:hush@replica',
        }),
      ).toThrow(/mysql:\/\/ro:\*\*\*@replica: .*database name is missing/);
    });

    it('turns the in-browser IDE off in production unless asked for', () => {
      expect(loadConfig({ NODE_ENV: 'production' }).graphqlIde).toBe(false);
      expect(loadConfig({}).graphqlIde).toBe(true);
    });

    it.each([
      ['RATE_LIMIT_TOKEN', '10 per second'],
      ['RATE_LIMIT_ADDRESS', '0/1s'],
      ['RATE_LIMIT_INGEST', 'lots'],
      ['INGEST_MAX_RECORDS', '0'],
      ['RANK_INDEX_MAX_ENTRIES', '-1'],
      ['RATE_LIMIT_EXPORT', 'daily'],
      ['EXPORT_MAX_CONCURRENT', '0'],
      ['RESPONSE_CACHE_MS', '1500'],
      ['RATE_LIMIT_TOKEN', '5/2d'],
      ['REDIS_URL', 'localhost:6379'],
      ['TRUST_PROXY', 'everyone'],
      ['MAX_QUERY_DEPTH', '1'],
      ['MAX_BODY_BYTES', '10mb'],
      ['REQUEST_TIMEOUT_MS', '50'],
      ['CORS_ORIGINS', '*'],
    ])('refuses %s=%s with a message naming it', (name, value) => {
      expect(() => loadConfig({ [name]: value })).toThrow(name);
    });

    it('keeps the password out of the reported databaseUrl', () => {
      expect(
        loadConfig({ DATABASE_URL: 'mysql://app:TopSecret99@db/loyalty' }).databaseUrl,
      ).not.toContain('TopSecret99');
    });

    it.each([
      ['0', 0],
      ['1', 1],
      ['65535', 65535],
      ['3000', 3000],
    ])('accepts PORT %s', (raw, port) => {
      expect(loadConfig({ PORT: raw }).port).toBe(port);
    });

    it.each([
      '65536',
      '-1',
      'abc',
      '3000abc',
      '30.5',
      '1e3',
      ' 3000',
      '0x50',
      '99999999999999999999',
    ])('refuses PORT %p, naming PORT', (raw) => {
      const error = configErrorOf({ PORT: raw });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain('PORT');
      expect(error.problems[0]).toContain(raw);
    });
  });

  describe('booleans', () => {
    const names: Array<['INTROSPECTION' | 'MIGRATE_ON_START', 'introspection' | 'migrateOnStart']> =
      [
        ['INTROSPECTION', 'introspection'],
        ['MIGRATE_ON_START', 'migrateOnStart'],
      ];

    describe.each(names)('%s', (name, field) => {
      it.each(['true', 'TRUE', 'True', '1', 'yes', 'YES', 'on', ' true '])(
        'reads %p as true',
        (raw) => {
          expect(loadConfig({ [name]: raw })[field]).toBe(true);
        },
      );

      it.each(['false', 'FALSE', '0', 'no', 'No', 'off', ' false\n'])(
        'reads %p as false',
        (raw) => {
          expect(loadConfig({ [name]: raw })[field]).toBe(false);
        },
      );

      it.each(['maybe', '2', 'y', 'n', 'enabled', 'truee'])(
        'refuses %p, naming the setting',
        (raw) => {
          const error = configErrorOf({ [name]: raw });
          expect(error.problems).toHaveLength(1);
          expect(error.problems[0]).toContain(name);
          expect(error.problems[0]).toContain(raw);
        },
      );
    });
  });

  describe('SCHEMA_PROFILE and STRICT_MODE', () => {
    it.each([
      [{}, 'extended'],
      [{ SCHEMA_PROFILE: 'spec' }, 'spec'],
      [{ SCHEMA_PROFILE: 'extended' }, 'extended'],
      [{ SCHEMA_PROFILE: ' Galxe ' }, 'galxe'],
      [{ STRICT_MODE: 'true' }, 'spec'],
      [{ STRICT_MODE: 'yes', SCHEMA_PROFILE: 'spec' }, 'spec'],
      [{ STRICT_MODE: 'false' }, 'extended'],
      [{ STRICT_MODE: 'false', SCHEMA_PROFILE: 'galxe' }, 'galxe'],
      [{ STRICT_MODE: 'off', SCHEMA_PROFILE: 'spec' }, 'spec'],
    ])('reads %p as the %s profile', (env, profile) => {
      expect(loadConfig(env).schemaProfile).toBe(profile);
    });

    it('refuses an unknown profile, listing the profiles', () => {
      const error = configErrorOf({ SCHEMA_PROFILE: 'strict' });
      expect(error.problems).toEqual([
        'SCHEMA_PROFILE must be one of spec, extended, galxe (got "strict")',
      ]);
    });

    it.each(['extended', 'galxe'])(
      'refuses STRICT_MODE=true beside SCHEMA_PROFILE=%s, naming both',
      (profile) => {
        const error = configErrorOf({ STRICT_MODE: 'true', SCHEMA_PROFILE: profile });
        expect(error.problems).toEqual([
          `STRICT_MODE=true means SCHEMA_PROFILE=spec, but SCHEMA_PROFILE is "${profile}": set only one of them`,
        ]);
      },
    );

    it.each(['maybe', '2', 'enabled'])('refuses STRICT_MODE=%p, naming the setting', (raw) => {
      const error = configErrorOf({ STRICT_MODE: raw });
      expect(error.problems).toEqual([`STRICT_MODE must be true or false (got "${raw}")`]);
    });
  });

  describe('CURSOR_SECRET', () => {
    it('accepts a secret of 32 characters or more', () => {
      expect(loadConfig({ CURSOR_SECRET: SECRET_32 }).cursorSecret).toBe(SECRET_32);
      expect(loadConfig({ CURSOR_SECRET: SECRET_32 + 'more' }).cursorSecret).toBe(
        SECRET_32 + 'more',
      );
    });

    it.each([1, 16, 31])('refuses a secret of %d characters', (length) => {
      const error = configErrorOf({ CURSOR_SECRET: 'x'.repeat(length) });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain('CURSOR_SECRET');
      expect(error.problems[0]).toContain('32');
    });

    it('never echoes the secret in the error', () => {
      const error = configErrorOf({ CURSOR_SECRET: 'short-secret-value' });
      expect(error.message).not.toContain('short-secret-value');
    });
  });

  describe('DATABASE_URL', () => {
    it('reports an unsupported or unreadable DATABASE_URL as a problem', () => {
      expect(configErrorOf({ DATABASE_URL: 'oracle://u:p@db/x' }).problems[0]).toContain(
        'DATABASE_URL',
      );
      expect(configErrorOf({ DATABASE_URL: 'postgres://u:p@db' }).problems[0]).toContain(
        'the database name is missing',
      );
      expect(configErrorOf({ DATABASE_URL: 'garbage' }).problems[0]).toContain('DATABASE_URL');
      expect(configErrorOf({ DATABASE_URL: 'mysql://db:3306' }).problems[0]).toContain(
        'DATABASE_URL',
      );
    });
  });

  describe('ConfigError', () => {
    it('reports several problems together', () => {
      const error = configErrorOf({
        PORT: 'eighty',
        DATABASE_URL: 'oracle://u:p@db/x',
        STRICT_MODE: 'maybe',
        INTROSPECTION: 'perhaps',
        MIGRATE_ON_START: 'sometimes',
        CURSOR_SECRET: 'short',
      });
      expect(error.name).toBe('ConfigError');
      expect(error).toBeInstanceOf(Error);
      expect(error.problems).toHaveLength(6);
      for (const name of [
        'PORT',
        'DATABASE_URL',
        'STRICT_MODE',
        'INTROSPECTION',
        'MIGRATE_ON_START',
        'CURSOR_SECRET',
      ]) {
        expect(error.problems.filter((p) => p.includes(name))).toHaveLength(1);
      }
      for (const problem of error.problems) expect(error.message).toContain(problem);
    });

    it('puts every problem on its own line of the message', () => {
      const error = new ConfigError(['first problem', 'second problem']);
      expect(error.problems).toEqual(['first problem', 'second problem']);
      expect(error.message.split('\n')).toEqual([
        'Invalid configuration:',
        '  - first problem',
        '  - second problem',
      ]);
    });
  });
});
