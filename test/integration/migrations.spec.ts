import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccessTokenEntity } from '../../src/auth/access-token.entity';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { displayPrefixOf, generateToken, hashToken } from '../../src/auth/token-format';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import { HOST_MIGRATIONS, hostDataSourceOptions } from '../../src/host/config/host-data-source';
import { Dashboard1763800000000 } from '../../src/host/dashboard/migrations/1763800000000-dashboard';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../../src/loyalty.entities';
import { dialectOf, resolveDialect } from '../../src/storage/engines';
import { runSql } from '../utils/sql';
import { runCli } from '../utils/cli';
import { InitialSchema1763700000000 } from '../../src/storage/migrations/1763700000000-initial-schema';
import { BoardBacklog1764300000000 } from '../../src/storage/migrations/1764300000000-board-backlog';
import { SpaceAlias1764700000000 } from '../../src/storage/migrations/1764700000000-space-alias';
import {
  SERVER_REQUIREMENTS,
  ServerRequirements,
} from '../../src/storage/schema/server-requirements';
import { MigrationRefusedError } from '../../src/storage/migrations/table-migration';
import { transactionRunnerProvider } from '../../src/storage/module/transaction-runner.provider';
import type { TransactionRunner } from '../../src/storage/transactions/transaction-runner';
import { allTables, columnsOf, indexesOf, tablesAmong } from '../utils/catalog';
import {
  createTestDatabase,
  DB_KINDS,
  hostConnection,
  postgresAdmin,
  TestDatabase,
} from '../utils/test-databases';

/** The columns of keys compared byte for byte (table.column, sorted). */
const KEY_COLUMNS = [
  'board_changes.address_key',
  'board_entries.address_key',
  'board_rank_buckets.address_key',
  'points_events.address_key',
  'points_events.event_key',
  'profiles.address_key',
  'quest_participants.address_key',
  'quest_participants.quest_id',
  'quests.id',
];
/** The module's migrations and ours, by name: a host may add its own between them. */
const KNOWN_MIGRATIONS = new Set([
  ...LOYALTY_MIGRATIONS.map((migration) => migration.name),
  Dashboard1763800000000.name,
]);
const known = (applied: Array<{ name: string }>) =>
  applied.map((m) => m.name).filter((name) => KNOWN_MIGRATIONS.has(name));

/** The access tokens service on a data source of a spec's own, as the module wires it. */
function tokensServiceOf(dataSource: DataSource): {
  tokens: AccessTokensService;
  close(): Promise<void>;
} {
  const runner = (
    transactionRunnerProvider as { useFactory: (source: DataSource) => TransactionRunner }
  ).useFactory(dataSource);
  const tokens = new AccessTokensService(dataSource.getRepository(AccessTokenEntity), runner);
  return {
    tokens,
    close: async () => {
      await tokens.onApplicationShutdown();
      await (
        runner as Partial<{ onApplicationShutdown(): Promise<void> }>
      ).onApplicationShutdown?.();
    },
  };
}

describe.each(DB_KINDS)('migrations on %s', (kind) => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    dataSource = await new DataSource(
      await hostDataSourceOptions(parseDatabaseUrl(db.url)),
    ).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('build the schema the entities describe, with nothing left for TypeORM to change', async () => {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    expect(known(applied)).toEqual([
      'InitialSchema1763700000000',
      'Dashboard1763800000000',
      'TokenScopes1763900000000',
      'BoardChanges1764000000000',
      'SqliteClusteredLedger1764100000000',
      'SqliteLedgerDayIndex1764200000000',
      'BoardBacklog1764300000000',
      'SpaceTokens1764400000000',
      'BoardRankBuckets1764500000000',
      'LedgerReasons1764600000000',
      'SpaceAlias1764700000000',
      'TokenCreators1764800000000',
    ]);
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('create the descending rank index the keyset queries rely on', async () => {
    expect(await indexesOf(dataSource, 'board_entries')).toEqual([
      {
        name: 'ix_board_entries_rank',
        columns: 'space_id, sprint_id, points desc, reached_at, address_key',
      },
    ]);
  });

  it("index the ledger's time by day on SQLite, by exact time elsewhere, and each address's entries", async () => {
    expect(await indexesOf(dataSource, 'points_events')).toEqual([
      { name: 'ix_points_events_address', columns: 'space_id, address_key, occurred_at' },
      kind === 'sqlite'
        ? { name: 'ix_points_events_space_day', columns: 'space_id, occurred_at / 86400000' }
        : { name: 'ix_points_events_space_time', columns: 'space_id, occurred_at' },
    ]);
  });

  it('revert cleanly and apply again', async () => {
    const tableNames = (names: string[]) => tablesAmong(dataSource, names);
    // Rows written under the last migration survive its revert and its re-application.
    await runSql(dataSource, 'INSERT INTO spaces (id, name) VALUES (7, ?)', ['Kept']);
    await runSql(
      dataSource,
      `INSERT INTO points_events (event_key, space_id, address_key, points, occurred_at)
       VALUES ('k2', 7, '0xb', 5, 2), ('k1', 7, '0xa', 3, 1)`,
    );
    await runSql(
      dataSource,
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
       VALUES (7, 0, '0xb', 5, 2), (7, 0, '0xa', 3, 1)`,
    );
    const rows = async () => [
      // The columns every migration has (the ledger reasons' adds reason).
      await runSql(
        dataSource,
        'SELECT event_key, space_id, address_key, points, occurred_at FROM points_events ORDER BY event_key',
      ),
      // The columns every migration has (the rank buckets' adds prior_reached_at).
      await runSql(
        dataSource,
        'SELECT space_id, sprint_id, address_key, points, reached_at FROM board_entries ORDER BY address_key',
      ),
    ];
    const written = await rows();
    // SQLite's catalogue: names of the schema objects that match, sorted.
    const sqliteNames = async (where: string): Promise<string[]> =>
      kind === 'sqlite'
        ? (
            await runSql<{ name: string }>(
              dataSource,
              `SELECT name FROM sqlite_master WHERE ${where} ORDER BY name`,
            )
          ).map((row) => row.name)
        : [];
    const ledgerIndexes = async () =>
      (await indexesOf(dataSource, 'points_events')).map((index) => index.name);
    const withoutRowid = () => sqliteNames("type = 'table' AND sql LIKE '%WITHOUT ROWID%'");
    const boardColumns = () => columnsOf(dataSource, 'boards');
    await runSql(
      dataSource,
      'INSERT INTO boards (space_id, sprint_id, entry_count, unfolded_since) VALUES (7, 0, 2, 41)',
    );
    // Undoes the last migrations, down to and including `name` (a host's may follow ours).
    const undoThrough = async (name: string) => {
      for (;;) {
        const [last] = await runSql(
          dataSource,
          'SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1',
        );
        await dataSource.undoLastMigration({ transaction: 'each' });
        if (last.name === name) return;
      }
    };
    await runSql(
      dataSource,
      `INSERT INTO access_tokens (id, name, prefix, token_hash, created_at, scopes, space_id, expires_at, last_used_from)
       VALUES ('t1', 'space token', 'lp_x', 'h1', 1, 'ingest', 7, 99, '::1')`,
    );
    await runSql(
      dataSource,
      `UPDATE spaces SET is_private = ${dialectOf(dataSource).booleanLiteral(true)} WHERE id = 7`,
    );
    await undoThrough('SpaceTokens1764400000000');
    expect(await columnsOf(dataSource, 'access_tokens')).toEqual([
      'id',
      'name',
      'prefix',
      'token_hash',
      'created_at',
      'last_used_at',
      'revoked_at',
      'scopes',
    ]);
    expect(await columnsOf(dataSource, 'spaces')).toEqual(['id', 'name', 'description']);
    expect(await runSql(dataSource, 'SELECT id, scopes FROM access_tokens')).toEqual([
      { id: 't1', scopes: 'ingest' },
    ]);
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await boardColumns()).toEqual(['space_id', 'sprint_id', 'entry_count']);
    expect(await runSql(dataSource, 'SELECT entry_count AS n FROM boards')).toEqual([{ n: 2 }]);
    expect(await rows()).toEqual(written);
    await dataSource.undoLastMigration({ transaction: 'each' });
    // Undone: the address index (LedgerReasons) went with the migrations after the day index's.
    expect(await ledgerIndexes()).toEqual(['ix_points_events_space_time']);
    expect(await rows()).toEqual(written);
    expect(await withoutRowid()).toEqual(
      kind === 'sqlite' ? ['board_entries', 'points_events'] : [],
    );
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await withoutRowid()).toEqual([]);
    expect(await rows()).toEqual(written);
    await dataSource.runMigrations({ transaction: 'each' });
    expect(await rows()).toEqual(written);
    expect(await ledgerIndexes()).toEqual([
      'ix_points_events_address',
      kind === 'sqlite' ? 'ix_points_events_space_day' : 'ix_points_events_space_time',
    ]);
    expect(await boardColumns()).toEqual([
      'space_id',
      'sprint_id',
      'entry_count',
      'unfolded_since',
      'bucket_layout',
    ]);
    expect(await columnsOf(dataSource, 'board_entries')).toContain('prior_reached_at');
    // The token made before the space tokens migration is a deployment token, its space public.
    expect(
      await runSql(
        dataSource,
        'SELECT space_id AS spaceId, expires_at AS expiresAt, last_used_from AS lastUsedFrom, replaced_by AS replacedBy FROM access_tokens',
      ),
    ).toEqual([{ spaceId: null, expiresAt: null, lastUsedFrom: null, replacedBy: null }]);
    expect(
      (await runSql(dataSource, 'SELECT is_private AS p FROM spaces')).map((r) => Number(r.p)),
    ).toEqual([0]);
    await undoThrough('BoardChanges1764000000000');
    expect(await tableNames(['board_changes', 'board_entries'])).toEqual(['board_entries']);
    await dataSource.undoLastMigration({ transaction: 'each' });
    const columns = await columnsOf(dataSource, 'access_tokens');
    expect(columns).toContain('token_hash');
    expect(columns).not.toContain('scopes');
    await dataSource.undoLastMigration({ transaction: 'each' });
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await tableNames(['spaces', 'board_entries', 'admins', 'admin_sessions'])).toEqual([]);
    expect(await dataSource.runMigrations()).toHaveLength(HOST_MIGRATIONS.length);
  });
});

describe.each(DB_KINDS)('the token scopes migration on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(() => db?.drop());

  it('gives every token created before it the query scope, and only that', async () => {
    const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
    const before = await new DataSource({
      ...options,
      entities: [],
      migrations: [InitialSchema1763700000000, Dashboard1763800000000],
    }).initialize();
    const token = generateToken();
    const id = randomUUID();
    try {
      await before.runMigrations({ transaction: 'each' });
      // The row exactly as the old schema's code wrote it.
      await runSql(
        before,
        'INSERT INTO access_tokens (id, name, prefix, token_hash, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL, NULL)',
        [id, 'old', displayPrefixOf(token), hashToken(token), Date.now()],
      );
    } finally {
      await before.destroy();
    }

    const after = await new DataSource(options).initialize();
    try {
      expect(known(await after.runMigrations({ transaction: 'each' }))).toEqual([
        'TokenScopes1763900000000',
        'BoardChanges1764000000000',
        'SqliteClusteredLedger1764100000000',
        'SqliteLedgerDayIndex1764200000000',
        'BoardBacklog1764300000000',
        'SpaceTokens1764400000000',
        'BoardRankBuckets1764500000000',
        'LedgerReasons1764600000000',
        'SpaceAlias1764700000000',
        'TokenCreators1764800000000',
      ]);
      const [row] = await runSql(after, 'SELECT scopes FROM access_tokens WHERE id = ?', [id]);
      expect(row.scopes).toBe('query');

      const service = tokensServiceOf(after);
      try {
        const { tokens } = service;
        const request = { headers: { 'access-token': token } };
        expect(await tokens.authorizeRequest(request, 'query')).toEqual({
          id,
          name: 'old',
          scopes: ['query'],
          spaceId: null,
        });
        await expect(tokens.authorizeRequest(request, 'ingest')).rejects.toMatchObject({
          code: 'INSUFFICIENT_SCOPE',
          message: "Access token lacks the 'ingest' scope",
        });
        expect((await tokens.list()).find((t) => t.id === id)?.scopes).toEqual(['query']);
      } finally {
        await service.close();
      }
    } finally {
      await after.destroy();
    }
  });
});

describe.each(DB_KINDS)('the space tokens migration on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(() => db?.drop());

  it('keeps every token made before it working as a deployment token, with its scopes', async () => {
    const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
    const earlier = LOYALTY_MIGRATIONS.slice(
      0,
      LOYALTY_MIGRATIONS.indexOf(BoardBacklog1764300000000) + 1,
    );
    const before = await new DataSource({
      ...options,
      entities: [],
      migrations: [...earlier, Dashboard1763800000000],
    }).initialize();
    const token = generateToken();
    const revokedToken = generateToken();
    const id = randomUUID();
    const createdAt = Date.now() - 86_400_000;
    try {
      await before.runMigrations({ transaction: 'each' });
      // The rows exactly as the previous schema's code wrote them.
      await runSql(
        before,
        'INSERT INTO access_tokens (id, name, prefix, token_hash, scopes, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)',
        [
          id,
          'ci',
          displayPrefixOf(token),
          hashToken(token),
          'ingest,query',
          createdAt,
          createdAt + 5,
        ],
      );
      await runSql(
        before,
        'INSERT INTO access_tokens (id, name, prefix, token_hash, scopes, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)',
        [
          randomUUID(),
          'gone',
          displayPrefixOf(revokedToken),
          hashToken(revokedToken),
          'query',
          createdAt,
          createdAt + 9,
        ],
      );
      await runSql(before, "INSERT INTO spaces (id, name) VALUES (3, 'Kept')");
    } finally {
      await before.destroy();
    }

    const after = await new DataSource(options).initialize();
    try {
      expect(known(await after.runMigrations({ transaction: 'each' }))).toEqual([
        'SpaceTokens1764400000000',
        'BoardRankBuckets1764500000000',
        'LedgerReasons1764600000000',
        'SpaceAlias1764700000000',
        'TokenCreators1764800000000',
      ]);
      expect(
        await runSql(
          after,
          'SELECT space_id AS spaceId, expires_at AS expiresAt, last_used_from AS lastUsedFrom, scopes, created_by AS createdBy FROM access_tokens WHERE id = ?',
          [id],
        ),
      ).toEqual([
        // No creator was recorded before TokenCreators: null, never a guess.
        {
          spaceId: null,
          expiresAt: null,
          lastUsedFrom: null,
          scopes: 'ingest,query',
          createdBy: null,
        },
      ]);
      expect(
        (await runSql(after, 'SELECT is_private AS p FROM spaces')).map((r) => Number(r.p)),
      ).toEqual([0]);
      expect(await indexesOf(after, 'access_tokens')).toEqual([
        { name: 'ix_access_tokens_space', columns: 'space_id' },
        { name: 'ux_access_tokens_hash', columns: 'token_hash' },
      ]);

      const service = tokensServiceOf(after);
      try {
        const { tokens } = service;
        const request = { headers: { 'access-token': token }, ip: '203.0.113.9' };
        expect(await tokens.authorizeRequest(request, 'ingest')).toEqual({
          id,
          name: 'ci',
          scopes: ['ingest', 'query'],
          spaceId: null,
        });
        await expect(tokens.authenticate(revokedToken)).rejects.toMatchObject({
          code: 'INVALID_TOKEN',
        });
        await tokens.flushLastUsed();
        const info = await tokens.find(id);
        expect(info).toMatchObject({
          id,
          name: 'ci',
          scopes: ['ingest', 'query'],
          spaceId: null,
          createdAt: new Date(createdAt).toISOString(),
          expiresAt: null,
          lastUsedFrom: '203.0.113.9',
        });
        expect((await tokens.list({ deployment: true })).map((t) => t.id)).toEqual([id]);
        expect(await tokens.list({ spaceIds: [3] })).toEqual([]);
        expect((await tokens.list()).map((t) => t.id)).toEqual([id]);
      } finally {
        await service.close();
      }
    } finally {
      await after.destroy();
    }
  });
});

describe.each(DB_KINDS)('the space alias migration on %s', (kind) => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((db) => db.drop())));

  it.each([
    ['from the start', []],
    [
      'over the column an attempt left without its index',
      ['ALTER TABLE spaces ADD COLUMN alias VARCHAR(64) NULL'],
    ],
  ])(
    'runs %s: spaces keep their rows, have no alias, and an alias is unique',
    async (_name, done) => {
      const db = await createTestDatabase(kind);
      databases.push(db);
      const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
      const earlier = LOYALTY_MIGRATIONS.slice(
        0,
        LOYALTY_MIGRATIONS.indexOf(SpaceAlias1764700000000),
      );
      const before = await new DataSource({
        ...options,
        entities: [],
        migrations: [...earlier, Dashboard1763800000000],
      }).initialize();
      try {
        await before.runMigrations({ transaction: 'each' });
        await runSql(before, "INSERT INTO spaces (id, name) VALUES (3, 'Kept'), (4, 'Also kept')");
        for (const statement of done) await runSql(before, statement);
      } finally {
        await before.destroy();
      }

      const after = await new DataSource(options).initialize();
      try {
        expect(known(await after.runMigrations({ transaction: 'each' }))).toEqual([
          'SpaceAlias1764700000000',
          'TokenCreators1764800000000',
        ]);
        const pending = await after.driver.createSchemaBuilder().log();
        expect(pending.upQueries.map((q) => q.query)).toEqual([]);
        expect(await runSql(after, 'SELECT id, name, alias FROM spaces ORDER BY id')).toEqual([
          { id: 3, name: 'Kept', alias: null },
          { id: 4, name: 'Also kept', alias: null },
        ]);
        await runSql(after, "UPDATE spaces SET alias = 'kept' WHERE id = 3");
        await expect(
          runSql(after, "UPDATE spaces SET alias = 'kept' WHERE id = 4"),
        ).rejects.toThrow(
          {
            sqlite: /UNIQUE constraint failed: spaces\.alias/,
            mariadb: /Duplicate entry 'kept'/,
            postgres: /duplicate key value violates unique constraint "ux_spaces_alias"/,
          }[kind],
        );
        // Any number of spaces without one.
        await runSql(after, "INSERT INTO spaces (id, name) VALUES (5, 'No alias either')");
        // TokenCreators came after it: undone first, its column goes.
        await after.undoLastMigration({ transaction: 'each' });
        expect(await columnsOf(after, 'access_tokens')).not.toContain('created_by');
        await after.undoLastMigration({ transaction: 'each' });
        expect(await runSql(after, 'SELECT id, name FROM spaces ORDER BY id')).toEqual([
          { id: 3, name: 'Kept' },
          { id: 4, name: 'Also kept' },
          { id: 5, name: 'No alias either' },
        ]);
        expect(await columnsOf(after, 'spaces')).not.toContain('alias');
      } finally {
        await after.destroy();
      }
    },
  );
});

describe.each(DB_KINDS)(
  'the space tokens migration on %s, after an attempt that stopped half-way',
  (kind) => {
    /** The migration's statements, by hand: what an attempt that failed part-way left behind. */
    const HALVES: Array<[string, string[]]> = [
      [
        'its first three columns',
        [
          'ALTER TABLE access_tokens ADD COLUMN space_id INTEGER NULL',
          'ALTER TABLE access_tokens ADD COLUMN last_used_from VARCHAR(45) NULL',
          'ALTER TABLE access_tokens ADD COLUMN expires_at BIGINT NULL',
        ],
      ],
      [
        'space_id, its index and is_private',
        [
          'ALTER TABLE access_tokens ADD COLUMN space_id INTEGER NULL',
          'CREATE INDEX ix_access_tokens_space ON access_tokens (space_id)',
          // As the migration writes it on each database (see SqlDialect.booleanLiteral).
          `ALTER TABLE spaces ADD COLUMN is_private BOOLEAN NOT NULL DEFAULT ${kind === 'postgres' ? 'FALSE' : '0'}`,
        ],
      ],
    ];
    const databases: TestDatabase[] = [];
    afterAll(() => Promise.all(databases.map((db) => db.drop())));

    it.each(HALVES)('runs to the end over %s, adding only what is missing', async (_name, done) => {
      const db = await createTestDatabase(kind);
      databases.push(db);
      const options = await hostDataSourceOptions(parseDatabaseUrl(db.url));
      const earlier = LOYALTY_MIGRATIONS.slice(
        0,
        LOYALTY_MIGRATIONS.indexOf(BoardBacklog1764300000000) + 1,
      );
      const token = generateToken();
      const id = randomUUID();
      const before = await new DataSource({
        ...options,
        entities: [],
        migrations: [...earlier, Dashboard1763800000000],
      }).initialize();
      try {
        await before.runMigrations({ transaction: 'each' });
        await runSql(
          before,
          'INSERT INTO access_tokens (id, name, prefix, token_hash, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          [id, 'ci', displayPrefixOf(token), hashToken(token), 'query', Date.now()],
        );
        await runSql(before, "INSERT INTO spaces (id, name) VALUES (3, 'Kept')");
        for (const statement of done) await runSql(before, statement);
      } finally {
        await before.destroy();
      }

      const after = await new DataSource(options).initialize();
      try {
        expect(known(await after.runMigrations({ transaction: 'each' }))).toEqual([
          'SpaceTokens1764400000000',
          'BoardRankBuckets1764500000000',
          'LedgerReasons1764600000000',
          'SpaceAlias1764700000000',
          'TokenCreators1764800000000',
        ]);
        // The schema the entities describe, the index once, and the rows as they were.
        const pending = await after.driver.createSchemaBuilder().log();
        expect(pending.upQueries.map((q) => q.query)).toEqual([]);
        expect(await indexesOf(after, 'access_tokens')).toEqual([
          { name: 'ix_access_tokens_space', columns: 'space_id' },
          { name: 'ux_access_tokens_hash', columns: 'token_hash' },
        ]);
        expect(
          (await runSql(after, 'SELECT is_private AS p FROM spaces')).map((r) => Number(r.p)),
        ).toEqual([0]);
        const service = tokensServiceOf(after);
        try {
          expect(await service.tokens.authenticate(token)).toMatchObject({ id, spaceId: null });
          expect(await service.tokens.find(id)).toMatchObject({
            expiresAt: null,
            lastUsedFrom: null,
          });
        } finally {
          await service.close();
        }
      } finally {
        await after.destroy();
      }
    });
  },
);

/** The module's migrations on a data source of this type, as a host that is not ours gives them. */
function hostDataSource(url: string, type: 'mysql' | 'mariadb', migrations = LOYALTY_MIGRATIONS) {
  return new DataSource({
    type,
    url,
    entities: LOYALTY_ENTITIES,
    migrations,
    migrationsRun: true,
  });
}

/** The tables of a scratch database, looked at on a data source of its own that changes nothing. */
async function tablesOf(db: TestDatabase): Promise<string[]> {
  const looking = await new DataSource(hostConnection(db)).initialize();
  try {
    return await allTables(looking);
  } finally {
    await looking.destroy();
  }
}

/** The first migration, checking for the server (and writing its DDL for) what `requirements` say. */
function initialSchemaRequiring(requirements: ServerRequirements) {
  return class extends InitialSchema1763700000000 {
    protected override requirementsFor(): ServerRequirements {
      return requirements;
    }
  };
}

describe('the migrations on MariaDB, whatever type the host gives its data source', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase('mariadb');
  });
  afterEach(() => db?.drop());

  it.each(['mysql', 'mariadb'] as const)(
    'migrate an empty database with `type: %s`, keys binary and NO PAD',
    async (type) => {
      const dataSource = await hostDataSource(db.url, type).initialize();
      try {
        const [{ applied }] = await runSql(
          dataSource,
          'SELECT COUNT(*) AS applied FROM migrations',
        );
        expect(Number(applied)).toBe(LOYALTY_MIGRATIONS.length);
        const keys: Array<{ name: string; collation: string }> = await runSql(
          dataSource,
          `SELECT CONCAT(table_name, '.', column_name) AS name, collation_name AS collation
             FROM information_schema.columns
            WHERE table_schema = DATABASE() AND collation_name LIKE '%bin'`,
        );
        expect(keys.sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual(
          KEY_COLUMNS.map((name) => ({ name, collation: 'utf8mb4_nopad_bin' })),
        );
        // Binary: case counts and the order is by code unit; NO PAD: a trailing space counts.
        await runSql(
          dataSource,
          `INSERT INTO points_events (event_key, space_id, address_key, points, occurred_at)
           VALUES ('k1', 1, '0xa', 1, 1), ('k1 ', 1, '0xa', 1, 1), ('K1', 1, '0xa', 1, 1)`,
        );
        const rows: Array<{ eventKey: string }> = await runSql(
          dataSource,
          'SELECT event_key AS eventKey FROM points_events ORDER BY event_key',
        );
        expect(rows.map((row) => row.eventKey)).toEqual(['K1', 'k1', 'k1 ']);
        expect((await resolveDialect(dataSource)).upsertReturning).toBe(true);
      } finally {
        await dataSource.destroy();
      }
    },
  );

  it('refuse a first migration whose key collation the server lacks, and create nothing', async () => {
    const missing = { ...SERVER_REQUIREMENTS.mariadb, keyCollation: 'utf8mb4_missing_bin' };
    const attempt = hostDataSource(db.url, 'mysql', [
      initialSchemaRequiring(missing),
      ...LOYALTY_MIGRATIONS.slice(1),
    ]).initialize();
    await expect(attempt).rejects.toThrow(MigrationRefusedError);
    await expect(attempt).rejects.toThrow(
      /^Migration InitialSchema1763700000000 refused before changing anything: the server \(MariaDB [\d.]+\) has no utf8mb4 collation utf8mb4_missing_bin, which key columns need \(binary and NO PAD: case-sensitive, trailing spaces significant\): use MySQL 8\.0\.17 or later \(utf8mb4_0900_bin\) or MariaDB 10\.8 or later \(utf8mb4_nopad_bin\)\.$/,
    );
    // Not even TypeORM's bookkeeping table, which it made before any migration ran.
    expect(await tablesOf(db)).toEqual([]);
  });

  it("build MySQL's schema when taken for MySQL: refused here unless the server has utf8mb4_0900_bin", async () => {
    const attempt = hostDataSource(db.url, 'mariadb', [
      initialSchemaRequiring(SERVER_REQUIREMENTS.mysql),
    ]).initialize();
    const admin = await new DataSource({ type: 'mysql', url: db.url }).initialize();
    const [{ n }] = await admin
      .query(
        "SELECT COUNT(*) AS n FROM information_schema.collations WHERE collation_name = 'utf8mb4_0900_bin'",
      )
      .finally(() => admin.destroy());
    if (Number(n) === 0) {
      await expect(attempt).rejects.toThrow(
        /refused before changing anything: the server \(MariaDB [\d.]+\) has no utf8mb4 collation utf8mb4_0900_bin/,
      );
      expect(await tablesOf(db)).toEqual([]);
    } else {
      // MariaDB 11.4.5 and later know MySQL's name too.
      await (await attempt).destroy();
      expect(await tablesOf(db)).toContain('points_events');
    }
  });
});

describe.each(DB_KINDS)('the migrations on %s, over tables left from an attempt', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(() => db?.drop());

  it('refuse, naming the tables and what to do, and change nothing', async () => {
    // What the reported first attempt left: the tables made before its failing statement.
    const before = await new DataSource(hostConnection(db)).initialize();
    try {
      await runSql(
        before,
        'CREATE TABLE spaces (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, description TEXT NULL)',
      );
      await runSql(
        before,
        'CREATE TABLE sprints (id INTEGER NOT NULL PRIMARY KEY, space_id INTEGER NOT NULL, name VARCHAR(255) NOT NULL, start_time BIGINT NOT NULL, end_time BIGINT NOT NULL)',
      );
      await runSql(before, "INSERT INTO spaces (id, name) VALUES (1, 'Kept')");
    } finally {
      await before.destroy();
    }

    const attempt = new DataSource({
      ...hostConnection(db),
      entities: LOYALTY_ENTITIES,
      migrations: LOYALTY_MIGRATIONS,
      migrationsRun: true,
    }).initialize();
    await expect(attempt).rejects.toThrow(
      'Migration InitialSchema1763700000000 refused before changing anything: the database ' +
        'already has tables this migration creates (spaces, sprints) and no record of the ' +
        'migration having run: left over from an earlier attempt that stopped half-way ' +
        "(MySQL/MariaDB), or another application's. If they are left over, `loyalty migrate " +
        '--repair` drops them when every one is empty and runs the migrations again; otherwise ' +
        'give the loyalty tables a database of their own.',
    );
    // SQLite and PostgreSQL roll the refused migration back, but TypeORM made its bookkeeping
    // table before it began; MySQL/MariaDB's refusal drops that table again.
    expect(await tablesOf(db)).toEqual(
      kind === 'mariadb' ? ['spaces', 'sprints'] : ['migrations', 'spaces', 'sprints'],
    );
    const after = await new DataSource(hostConnection(db)).initialize();
    try {
      expect(await runSql(after, 'SELECT id, name FROM spaces')).toEqual([{ id: 1, name: 'Kept' }]);
      if (kind !== 'mariadb') {
        expect(await runSql(after, 'SELECT COUNT(*) AS n FROM migrations')).toEqual([{ n: 0 }]);
      }
    } finally {
      await after.destroy();
    }
  });

  it('are dropped by `loyalty migrate --repair` only when every one is empty, then migrated', async () => {
    const env = { DATABASE_URL: db.url };
    if (kind !== 'mariadb') {
      // DDL is transactional here: a cut-off migration leaves nothing, so these are not its.
      const refusedHere = await runCli(['migrate', '--repair'], env);
      expect(refusedHere).toMatchObject({
        code: 2,
        stderr:
          'Migration InitialSchema1763700000000 finds tables it creates already there (spaces, ' +
          'sprints), but a migration cut off here leaves nothing behind (each runs in a ' +
          "transaction): they are another application's or were made by hand, so nothing was " +
          'dropped. Give the loyalty tables a database of their own, or drop these tables ' +
          'yourself\n',
      });
      expect(await tablesOf(db)).toEqual(['migrations', 'spaces', 'sprints']);
      return;
    }
    const refused = await runCli(['migrate', '--repair'], env);
    expect(refused).toMatchObject({
      code: 2,
      stderr:
        'Migration InitialSchema1763700000000 finds tables it creates already there, and spaces ' +
        "(1 row) holds rows: data, or another application's, so nothing was dropped. Give the " +
        'loyalty tables a database of their own, or drop these tables yourself if they are left ' +
        'over\n',
    });
    const check = new DataSource(hostConnection(db));
    await check.initialize();
    try {
      expect(await runSql(check, 'SELECT id, name FROM spaces')).toEqual([{ id: 1, name: 'Kept' }]);
      await runSql(check, 'DELETE FROM spaces');
    } finally {
      await check.destroy();
    }

    const repaired = await runCli(['migrate', '--repair'], env);
    expect(repaired.code).toBe(0);
    expect(repaired.stderr).toContain(
      'Dropped the empty tables spaces, sprints that InitialSchema1763700000000 had left\n',
    );
    expect(repaired.stderr).toContain('Applied InitialSchema1763700000000, ');
    const done = new DataSource(hostConnection(db));
    await done.initialize();
    try {
      expect(
        (await runSql<{ name: string }>(done, 'SELECT name FROM migrations'))
          .map((m) => m.name)
          .sort(),
      ).toEqual(HOST_MIGRATIONS.map((migration) => migration.name).sort());
      expect(await columnsOf(done, 'spaces')).toContain('alias');
    } finally {
      await done.destroy();
    }
    expect((await runCli(['migrate', '--repair'], env)).stderr).toBe('Database is up to date\n');
  });
});

describe('the migrations on PostgreSQL', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase('postgres');
  });
  afterEach(() => db?.drop());

  it('migrate an empty database as a host gives it, keys in the "C" collation', async () => {
    const logged: string[] = [];
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => {
      logged.push(String(message));
    });
    const dataSource = await new DataSource({
      ...hostConnection(db),
      entities: LOYALTY_ENTITIES,
      migrations: LOYALTY_MIGRATIONS,
      migrationsRun: true,
    }).initialize();
    try {
      log.mockRestore();
      const [{ applied }] = await runSql(dataSource, 'SELECT COUNT(*) AS applied FROM migrations');
      expect(applied).toBe(LOYALTY_MIGRATIONS.length);
      // The migrations that reshape SQLite's tables are recorded, and say they did nothing.
      expect(logged).toEqual([
        'SqliteClusteredLedger1764100000000: nothing to do on PostgreSQL (on sqlite only, it makes the ledger and board entries WITHOUT ROWID tables)',
        'SqliteLedgerDayIndex1764200000000: nothing to do on PostgreSQL (on sqlite only, it keys the ledger time index by day)',
      ]);
      const keys = await runSql<{ name: string }>(
        dataSource,
        `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
          WHERE table_schema = current_schema() AND collation_name = 'C' ORDER BY 1`,
      );
      expect(keys.map((key) => key.name)).toEqual(KEY_COLUMNS);
      // Byte order: case counts and comes before; a trailing space makes another key.
      await runSql(
        dataSource,
        `INSERT INTO points_events (event_key, space_id, address_key, points, occurred_at)
         VALUES ('k1', 1, '0xa', 1, 1), ('k1 ', 1, '0xa', 1, 1), ('K1', 1, '0xa', 1, 1),
                ('k-1', 1, '0xa', 1, 1)`,
      );
      const rows = await runSql<{ eventKey: string }>(
        dataSource,
        'SELECT event_key AS eventKey FROM points_events ORDER BY event_key',
      );
      // Under a language's collation (en_US) "k-1" would sort between "k1" and "K1".
      expect(rows.map((row) => row.eventKey)).toEqual(['K1', 'k-1', 'k1', 'k1 ']);
      expect((await resolveDialect(dataSource)).upsertReturning).toBe(true);
      // The schema the entities describe, with nothing for a host's migration:generate to add.
      const pending = await dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('refuse a database whose encoding is not UTF-8, creating nothing', async () => {
    const name = `loyalty_ascii_${randomUUID().slice(0, 8)}`;
    const admin = await postgresAdmin();
    await admin.query(`CREATE DATABASE ${name} ENCODING 'SQL_ASCII' TEMPLATE template0`);
    const url = new URL(db.url);
    url.pathname = `/${name}`;
    try {
      const attempt = new DataSource({
        type: 'postgres',
        url: url.toString(),
        entities: LOYALTY_ENTITIES,
        migrations: LOYALTY_MIGRATIONS,
        migrationsRun: true,
      }).initialize();
      await expect(attempt).rejects.toThrow(
        "Migration InitialSchema1763700000000 refused before changing anything: the database's " +
          "encoding is SQL_ASCII; the tables hold UTF-8 text: create the database with ENCODING 'UTF8' " +
          '(createdb -E UTF8 --template template0).',
      );
      // The migration's transaction rolled back; TypeORM's empty bookkeeping table stays.
      expect(
        await tablesOf({ kind: 'postgres', url: url.toString(), drop: async () => {} }),
      ).toEqual(['migrations']);
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
