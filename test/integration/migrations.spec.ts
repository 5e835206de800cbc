import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccessTokenEntity } from '../../src/auth/access-token.entity';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { displayPrefixOf, generateToken, hashToken } from '../../src/auth/token-format';
import { parseDatabaseUrl } from '../../src/storage/connection/database-url';
import {
  HOST_MIGRATIONS,
  resolveHostDataSourceOptions,
} from '../../src/host/config/host-data-source';
import { Dashboard1763800000000 } from '../../src/host/dashboard/migrations/1763800000000-dashboard';
import { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from '../../src/loyalty.entities';
import { resolveDialect } from '../../src/storage/dialect/sql-dialect';
import { InitialSchema1763700000000 } from '../../src/storage/migrations/1763700000000-initial-schema';
import { BoardBacklog1764300000000 } from '../../src/storage/migrations/1764300000000-board-backlog';
import { SpaceAlias1764700000000 } from '../../src/storage/migrations/1764700000000-space-alias';
import {
  SERVER_REQUIREMENTS,
  ServerRequirements,
} from '../../src/storage/schema/server-requirements';
import { MigrationRefusedError } from '../../src/storage/schema/table-migration';
import { transactionRunnerProvider } from '../../src/storage/transaction-runner.provider';
import type { TransactionRunner } from '../../src/storage/transactions/transaction-runner';
import { createTestDatabase, DB_KINDS, TestDatabase } from '../utils/test-databases';

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
      await resolveHostDataSourceOptions(parseDatabaseUrl(db.url)),
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
    ]);
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('create the descending rank index the keyset queries rely on', async () => {
    const sql =
      kind === 'sqlite'
        ? "SELECT sql AS definition FROM sqlite_master WHERE name = 'ix_board_entries_rank'"
        : "SELECT GROUP_CONCAT(CONCAT(column_name, ' ', collation) ORDER BY seq_in_index) AS definition FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = 'ix_board_entries_rank'";
    const [row] = await dataSource.query(sql);
    expect(String(row.definition)).toMatch(
      kind === 'sqlite'
        ? /points DESC, reached_at, address_key/
        : /points D,reached_at A,address_key A/,
    );
  });

  it("index the ledger's time by day on SQLite, by exact time elsewhere, and each address's entries", async () => {
    const sql =
      kind === 'sqlite'
        ? "SELECT name, sql AS definition FROM sqlite_master WHERE type = 'index' AND tbl_name = 'points_events' AND sql IS NOT NULL"
        : "SELECT index_name AS name, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS definition FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'points_events' AND index_name <> 'PRIMARY' GROUP BY index_name ORDER BY index_name";
    const rows: Array<{ name: string; definition: string }> = await dataSource.query(sql);
    expect(rows.map((row) => [row.name, String(row.definition).replace(/\s+/g, ' ')])).toEqual(
      kind === 'sqlite'
        ? [
            [
              'ix_points_events_space_day',
              'CREATE INDEX ix_points_events_space_day ON points_events (space_id, occurred_at / 86400000)',
            ],
            [
              'ix_points_events_address',
              'CREATE INDEX ix_points_events_address ON points_events (space_id, address_key, occurred_at)',
            ],
          ]
        : [
            ['ix_points_events_address', 'space_id,address_key,occurred_at'],
            ['ix_points_events_space_time', 'space_id,occurred_at'],
          ],
    );
  });

  it('revert cleanly and apply again', async () => {
    const tableNames = async (names: string[]) => {
      const rows: Array<{ name: string }> = await dataSource.query(
        kind === 'sqlite'
          ? `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${names.map(() => '?').join(', ')})`
          : `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (${names.map(() => '?').join(', ')})`,
        names,
      );
      return rows.map((row) => row.name);
    };
    // Rows written under the last migration survive its revert and its re-application.
    await dataSource.query('INSERT INTO spaces (id, name) VALUES (7, ?)', ['Kept']);
    await dataSource.query(
      `INSERT INTO points_events (event_key, space_id, address_key, points, occurred_at)
       VALUES ('k2', 7, '0xb', 5, 2), ('k1', 7, '0xa', 3, 1)`,
    );
    await dataSource.query(
      `INSERT INTO board_entries (space_id, sprint_id, address_key, points, reached_at)
       VALUES (7, 0, '0xb', 5, 2), (7, 0, '0xa', 3, 1)`,
    );
    const rows = async () => [
      // The columns every migration has (the ledger reasons' adds reason).
      await dataSource.query(
        'SELECT event_key, space_id, address_key, points, occurred_at FROM points_events ORDER BY event_key',
      ),
      // The columns every migration has (the rank buckets' adds prior_reached_at).
      await dataSource.query(
        'SELECT space_id, sprint_id, address_key, points, reached_at FROM board_entries ORDER BY address_key',
      ),
    ];
    const written = await rows();
    // SQLite's catalogue: names of the schema objects that match, sorted.
    const sqliteNames = async (where: string): Promise<string[]> =>
      kind === 'sqlite'
        ? (
            await dataSource.query(`SELECT name FROM sqlite_master WHERE ${where} ORDER BY name`)
          ).map((row: { name: string }) => row.name)
        : [];
    const ledgerIndexes = () =>
      sqliteNames("type = 'index' AND tbl_name = 'points_events' AND sql IS NOT NULL");
    const withoutRowid = () => sqliteNames("type = 'table' AND sql LIKE '%WITHOUT ROWID%'");
    const boardColumns = async () =>
      (
        await dataSource.query(
          kind === 'sqlite'
            ? "SELECT name FROM pragma_table_info('boards') ORDER BY cid"
            : "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'boards' ORDER BY ordinal_position",
        )
      ).map((row: { name: string }) => row.name);
    await dataSource.query(
      'INSERT INTO boards (space_id, sprint_id, entry_count, unfolded_since) VALUES (7, 0, 2, 41)',
    );
    const columnsOf = async (table: string) =>
      (
        await dataSource.query(
          kind === 'sqlite'
            ? `SELECT name FROM pragma_table_info('${table}') ORDER BY cid`
            : `SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '${table}' ORDER BY ordinal_position`,
        )
      ).map((row: { name: string }) => row.name);
    // Undoes the last migrations, down to and including `name` (a host's may follow ours).
    const undoThrough = async (name: string) => {
      for (;;) {
        const [last] = await dataSource.query(
          'SELECT name FROM migrations ORDER BY timestamp DESC LIMIT 1',
        );
        await dataSource.undoLastMigration({ transaction: 'each' });
        if (last.name === name) return;
      }
    };
    await dataSource.query(
      `INSERT INTO access_tokens (id, name, prefix, token_hash, created_at, scopes, space_id, expires_at, last_used_from)
       VALUES ('t1', 'space token', 'lp_x', 'h1', 1, 'ingest', 7, 99, '::1')`,
    );
    await dataSource.query('UPDATE spaces SET is_private = 1 WHERE id = 7');
    await undoThrough('SpaceTokens1764400000000');
    expect(await columnsOf('access_tokens')).toEqual([
      'id',
      'name',
      'prefix',
      'token_hash',
      'created_at',
      'last_used_at',
      'revoked_at',
      'scopes',
    ]);
    expect(await columnsOf('spaces')).toEqual(['id', 'name', 'description']);
    expect(await dataSource.query('SELECT id, scopes FROM access_tokens')).toEqual([
      { id: 't1', scopes: 'ingest' },
    ]);
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await boardColumns()).toEqual(['space_id', 'sprint_id', 'entry_count']);
    expect(await dataSource.query('SELECT entry_count AS n FROM boards')).toEqual([{ n: 2 }]);
    expect(await rows()).toEqual(written);
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await ledgerIndexes()).toEqual(kind === 'sqlite' ? ['ix_points_events_space_time'] : []);
    expect(await rows()).toEqual(written);
    expect(await withoutRowid()).toEqual(
      kind === 'sqlite' ? ['board_entries', 'points_events'] : [],
    );
    await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await withoutRowid()).toEqual([]);
    expect(await rows()).toEqual(written);
    await dataSource.runMigrations({ transaction: 'each' });
    expect(await rows()).toEqual(written);
    expect(await ledgerIndexes()).toEqual(
      kind === 'sqlite' ? ['ix_points_events_address', 'ix_points_events_space_day'] : [],
    );
    expect(await boardColumns()).toEqual([
      'space_id',
      'sprint_id',
      'entry_count',
      'unfolded_since',
      'bucket_layout',
    ]);
    expect(await columnsOf('board_entries')).toContain('prior_reached_at');
    // The token made before the space tokens migration is a deployment token, its space public.
    expect(
      await dataSource.query(
        'SELECT space_id AS spaceId, expires_at AS expiresAt, last_used_from AS lastUsedFrom, replaced_by AS replacedBy FROM access_tokens',
      ),
    ).toEqual([{ spaceId: null, expiresAt: null, lastUsedFrom: null, replacedBy: null }]);
    expect(
      (await dataSource.query('SELECT is_private AS p FROM spaces')).map((r: { p: unknown }) =>
        Number(r.p),
      ),
    ).toEqual([0]);
    await undoThrough('BoardChanges1764000000000');
    expect(await tableNames(['board_changes', 'board_entries'])).toEqual(['board_entries']);
    await dataSource.undoLastMigration({ transaction: 'each' });
    const columns: Array<{ name: string }> = await dataSource.query(
      kind === 'sqlite'
        ? "SELECT name FROM pragma_table_info('access_tokens')"
        : "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'access_tokens'",
    );
    expect(columns.map((c) => c.name)).toContain('token_hash');
    expect(columns.map((c) => c.name)).not.toContain('scopes');
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
    const options = await resolveHostDataSourceOptions(parseDatabaseUrl(db.url));
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
      await before.query(
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
      ]);
      const [row] = await after.query('SELECT scopes FROM access_tokens WHERE id = ?', [id]);
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
    const options = await resolveHostDataSourceOptions(parseDatabaseUrl(db.url));
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
      await before.query(
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
      await before.query(
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
      await before.query("INSERT INTO spaces (id, name) VALUES (3, 'Kept')");
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
      ]);
      expect(
        await after.query(
          'SELECT space_id AS spaceId, expires_at AS expiresAt, last_used_from AS lastUsedFrom, scopes FROM access_tokens WHERE id = ?',
          [id],
        ),
      ).toEqual([{ spaceId: null, expiresAt: null, lastUsedFrom: null, scopes: 'ingest,query' }]);
      expect(
        (await after.query('SELECT is_private AS p FROM spaces')).map((r: { p: unknown }) =>
          Number(r.p),
        ),
      ).toEqual([0]);
      const indexed: Array<{ name: string }> = await after.query(
        kind === 'sqlite'
          ? "SELECT name FROM pragma_index_list('access_tokens') WHERE name = 'ix_access_tokens_space'"
          : "SELECT DISTINCT index_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'access_tokens' AND column_name = 'space_id'",
      );
      expect(indexed.map((row) => row.name)).toEqual(['ix_access_tokens_space']);

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
      const options = await resolveHostDataSourceOptions(parseDatabaseUrl(db.url));
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
        await before.query("INSERT INTO spaces (id, name) VALUES (3, 'Kept'), (4, 'Also kept')");
        for (const statement of done) await before.query(statement);
      } finally {
        await before.destroy();
      }

      const after = await new DataSource(options).initialize();
      try {
        expect(known(await after.runMigrations({ transaction: 'each' }))).toEqual([
          'SpaceAlias1764700000000',
        ]);
        const pending = await after.driver.createSchemaBuilder().log();
        expect(pending.upQueries.map((q) => q.query)).toEqual([]);
        expect(await after.query('SELECT id, name, alias FROM spaces ORDER BY id')).toEqual([
          { id: 3, name: 'Kept', alias: null },
          { id: 4, name: 'Also kept', alias: null },
        ]);
        await after.query("UPDATE spaces SET alias = 'kept' WHERE id = 3");
        await expect(after.query("UPDATE spaces SET alias = 'kept' WHERE id = 4")).rejects.toThrow(
          kind === 'sqlite' ? /UNIQUE constraint failed: spaces\.alias/ : /Duplicate entry 'kept'/,
        );
        // Any number of spaces without one.
        await after.query("INSERT INTO spaces (id, name) VALUES (5, 'No alias either')");
        await after.undoLastMigration({ transaction: 'each' });
        expect(await after.query('SELECT id, name FROM spaces ORDER BY id')).toEqual([
          { id: 3, name: 'Kept' },
          { id: 4, name: 'Also kept' },
          { id: 5, name: 'No alias either' },
        ]);
        const columns: Array<{ name: string }> = await after.query(
          kind === 'sqlite'
            ? "SELECT name FROM pragma_table_info('spaces')"
            : "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'spaces'",
        );
        expect(columns.map((c) => c.name)).not.toContain('alias');
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
          'ALTER TABLE spaces ADD COLUMN is_private BOOLEAN NOT NULL DEFAULT 0',
        ],
      ],
    ];
    const databases: TestDatabase[] = [];
    afterAll(() => Promise.all(databases.map((db) => db.drop())));

    it.each(HALVES)('runs to the end over %s, adding only what is missing', async (_name, done) => {
      const db = await createTestDatabase(kind);
      databases.push(db);
      const options = await resolveHostDataSourceOptions(parseDatabaseUrl(db.url));
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
        await before.query(
          'INSERT INTO access_tokens (id, name, prefix, token_hash, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          [id, 'ci', displayPrefixOf(token), hashToken(token), 'query', Date.now()],
        );
        await before.query("INSERT INTO spaces (id, name) VALUES (3, 'Kept')");
        for (const statement of done) await before.query(statement);
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
        ]);
        // The schema the entities describe, the index once, and the rows as they were.
        const pending = await after.driver.createSchemaBuilder().log();
        expect(pending.upQueries.map((q) => q.query)).toEqual([]);
        const indexed: Array<{ name: string }> = await after.query(
          kind === 'sqlite'
            ? "SELECT name FROM pragma_index_list('access_tokens') WHERE name = 'ix_access_tokens_space'"
            : "SELECT DISTINCT index_name AS name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'access_tokens' AND column_name = 'space_id'",
        );
        expect(indexed.map((row) => row.name)).toEqual(['ix_access_tokens_space']);
        expect(
          (await after.query('SELECT is_private AS p FROM spaces')).map((r: { p: unknown }) =>
            Number(r.p),
          ),
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
  const looking = await new DataSource({
    ...(db.kind === 'sqlite'
      ? { type: 'better-sqlite3', database: db.url.slice('sqlite:'.length) }
      : { type: 'mysql', url: db.url }),
    entities: [],
    migrations: [],
  }).initialize();
  try {
    const rows: Array<{ name: string }> = await looking.query(
      db.kind === 'sqlite'
        ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        : 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name',
    );
    return rows.map((row) => row.name);
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
        const [{ applied }] = await dataSource.query('SELECT COUNT(*) AS applied FROM migrations');
        expect(Number(applied)).toBe(LOYALTY_MIGRATIONS.length);
        const keys: Array<{ name: string; collation: string }> = await dataSource.query(
          `SELECT CONCAT(table_name, '.', column_name) AS name, collation_name AS collation
             FROM information_schema.columns
            WHERE table_schema = DATABASE() AND collation_name LIKE '%bin'`,
        );
        expect(keys.sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual(
          [
            'board_changes.address_key',
            'board_entries.address_key',
            'board_rank_buckets.address_key',
            'points_events.address_key',
            'points_events.event_key',
            'profiles.address_key',
            'quest_participants.address_key',
            'quest_participants.quest_id',
            'quests.id',
          ].map((name) => ({ name, collation: 'utf8mb4_nopad_bin' })),
        );
        // Binary: case counts and the order is by code unit; NO PAD: a trailing space counts.
        await dataSource.query(
          `INSERT INTO points_events (event_key, space_id, address_key, points, occurred_at)
           VALUES ('k1', 1, '0xa', 1, 1), ('k1 ', 1, '0xa', 1, 1), ('K1', 1, '0xa', 1, 1)`,
        );
        const rows: Array<{ eventKey: string }> = await dataSource.query(
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
    const before = await new DataSource({
      ...(kind === 'sqlite'
        ? { type: 'better-sqlite3', database: db.url.slice('sqlite:'.length) }
        : { type: 'mysql', url: db.url }),
    }).initialize();
    try {
      await before.query(
        'CREATE TABLE spaces (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, description TEXT NULL)',
      );
      await before.query(
        'CREATE TABLE sprints (id INTEGER NOT NULL PRIMARY KEY, space_id INTEGER NOT NULL, name VARCHAR(255) NOT NULL, start_time BIGINT NOT NULL, end_time BIGINT NOT NULL)',
      );
      await before.query("INSERT INTO spaces (id, name) VALUES (1, 'Kept')");
    } finally {
      await before.destroy();
    }

    const attempt =
      kind === 'sqlite'
        ? new DataSource({
            type: 'better-sqlite3',
            database: db.url.slice('sqlite:'.length),
            entities: LOYALTY_ENTITIES,
            migrations: LOYALTY_MIGRATIONS,
            migrationsRun: true,
          }).initialize()
        : hostDataSource(db.url, 'mysql').initialize();
    await expect(attempt).rejects.toThrow(
      'Migration InitialSchema1763700000000 refused before changing anything: the database ' +
        'already has tables this migration creates (spaces, sprints) and no record of the ' +
        'migration having run: left over from an earlier attempt that stopped half-way, or ' +
        "another application's. If they are left over and hold nothing you need, drop them " +
        '(DROP TABLE spaces, sprints;) and run the migrations again; otherwise give the loyalty ' +
        'tables a database of their own.',
    );
    // SQLite rolls the refused migration back, but TypeORM made its bookkeeping table before it
    // began; MySQL/MariaDB's refusal drops that table again.
    expect(await tablesOf(db)).toEqual(
      kind === 'sqlite' ? ['migrations', 'spaces', 'sprints'] : ['spaces', 'sprints'],
    );
    const after = await new DataSource({
      ...(kind === 'sqlite'
        ? { type: 'better-sqlite3', database: db.url.slice('sqlite:'.length) }
        : { type: 'mysql', url: db.url }),
    }).initialize();
    try {
      expect(await after.query('SELECT id, name FROM spaces')).toEqual([{ id: 1, name: 'Kept' }]);
      if (kind === 'sqlite') {
        expect(await after.query('SELECT COUNT(*) AS n FROM migrations')).toEqual([{ n: 0 }]);
      }
    } finally {
      await after.destroy();
    }
  });
});
