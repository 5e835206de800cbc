import { adminCommand } from './commands/admin.command';
import { demoCommand } from './commands/demo.command';
import { exportCommand } from './commands/export.command';
import { importCommand } from './commands/import.command';
import { COMMANDS } from './commands';
import { migrateCommand } from './commands/migrate.command';
import { schemaCommand } from './commands/schema.command';
import { setupDemoCommand } from './commands/setup-demo.command';
import { tokenCreateCommand } from './commands/token-create.command';
import { exitCodeFor, run } from './cli';

// The help text as the switch-based CLI printed it, byte for byte.
const HELP = `Usage: loyalty <command> [options]   (npm run cli -- <command> ...)

Commands:
  migrate [--repair]          apply pending database migrations; --repair first drops the
                              tables a migration cut off mid-way left behind, when every one of
                              them is empty (a table holding rows is never dropped)
  admin create|reset-password --email E
                              create a dashboard operator, or set a new password for a
                              forgotten one (every session of that account ends); the password
                              is read from a prompt or the first line of standard input, never
                              from the command line
  token create --name NAME [--scope query,ingest] [--space ID] [--expires 30d|90d|never|YYYY-MM-DD]
                              create an API access token with these scopes (comma-separated;
                              default query), for one space (default: the whole deployment),
                              expiring after 30 or 90 days, at the end of a day (UTC) or never
                              (default); prints the token alone on stdout
  import FILE [--batch-size N] apply NDJSON records (docs/ingest.md), N per transaction
                              (default 200000; on MySQL/MariaDB a batch of points is two
                              transactions over separate address ranges); progress and
                              refused lines (with their line number) on stderr; exit 1 if any
                              was refused, or if a database error stopped it (it says at which
                              line, and what it applied). Safe to stop and re-run
  export --space ID [--sprint ID]
                              print a board as CSV in rank order as of one moment (one read
                              snapshot): rank,address,username,points
  backup --out FILE           copy an embedded (SQLite) database, as of one moment, into a new
                              FILE while the service goes on writing; database servers are
                              backed up with their own tools (docs/operations.md, Backup)
  demo [--entries N]          load the demo dataset: 3 spaces with sprints, quests and N
                              addresses with points each (default 5000)
  setup-demo [--entries N]    migrate, load the demo dataset into an empty database, create a
                              token and print a ready-to-paste curl line
  schema [--profile spec|extended|galxe] [--out FILE]
                              print the GraphQL schema (SDL) of a profile (default: the one
                              SCHEMA_PROFILE sets), or write it to FILE

Options for every command:
  --database-url URL          the database to work on (overrides DATABASE_URL; default
                              sqlite:./data/loyalty.sqlite): the one the service or host uses

Environment: DATABASE_URL, and the service's other settings; see README.md.`;

const TOKEN_USAGE =
  'usage: token create --name NAME [--scope query,ingest] [--space ID] [--expires 30d|90d|never|YYYY-MM-DD]';
const EXPIRIES =
  'use 30d, 90d, never, a date YYYY-MM-DD (the token expires at the end of that day, UTC) or an ISO 8601 date-time such as 2030-01-31T18:00:00Z (UTC when it names no zone), no more than 5 years ahead';
/** An existing file for `import FILE`. */
const FILE = __filename;

describe('loyalty <command> arguments (no database)', () => {
  let stdout: string;
  let stderr: string;
  const environment = process.env.DATABASE_URL;

  beforeEach(() => {
    stdout = '';
    stderr = '';
    process.env.DATABASE_URL = 'sqlite::memory:';
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    if (environment === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = environment;
  });

  /** What a user sees when the arguments stop the CLI before any database work. */
  async function cli(...args: string[]) {
    const code = await run(args).catch(exitCodeFor);
    return { code, stdout, stderr };
  }

  it.each([[[]], [['--help']], [['-h']], [['help']]])('prints the help for %j', async (args) => {
    expect(await cli(...args)).toEqual({ code: 0, stdout: `${HELP}\n`, stderr: '' });
  });

  it.each([
    [['--database-url'], '--database-url needs a URL (sqlite:FILE, mysql://..., postgres://...)\n'],
    [['--database-url=sqlite:a', '--database-url', 'sqlite:b'], '--database-url is given twice\n'],
    // Read as DATABASE_URL is, and told as the flag's, before any database work.
    [
      ['--database-url', 'ftp://x'],
      'Invalid configuration:\n  - --database-url: unsupported scheme "ftp:"; use sqlite:, mysql:, mariadb:, postgres:, postgresql:\n',
    ],
  ])('refuses migrate %j with exit 2', async (args, message) => {
    expect(await cli('migrate', ...args)).toEqual({ code: 2, stdout: '', stderr: message });
  });

  it('refuses an unknown command with the help, exit 2', async () => {
    expect(await cli('nope', '--name', 'x')).toEqual({
      code: 2,
      stdout: '',
      stderr: `unknown command "nope"\n\n${HELP}\n`,
    });
  });

  it('checks the configuration before the arguments', async () => {
    process.env.DATABASE_URL = 'bogus://x';
    const { code, stderr: said } = await cli('token', 'create');
    expect(code).toBe(2);
    expect(said).toMatch(/^Invalid configuration:\n {2}- DATABASE_URL/);
  });

  it.each<[string[], string]>([
    // migrate
    [['migrate', '--bogus'], "Unknown option '--bogus'\nusage: migrate [--repair]"],
    [
      ['migrate', 'now'],
      `Unexpected argument 'now'. This command does not take positional arguments\nusage: migrate [--repair]`,
    ],
    // admin create
    [['admin'], 'usage: admin create|reset-password --email E'],
    [['admin', 'list'], 'usage: admin create|reset-password --email E'],
    [['admin', 'reset-password'], 'admin reset-password needs --email E'],
    [['admin', 'create'], 'admin create needs --email E'],
    [['admin', 'create', '--email'], '--email needs a value'],
    [['admin', 'create', '--email', '--password', 'x'], '--email needs a value'],
    [['admin', 'create', '--password', 'x'], 'admin create needs --email E'],
    [
      ['admin', 'create', '--email', 'a@b.co', '--password', 'p'],
      'the password is read from a prompt or standard input, never from arguments',
    ],
    [
      ['admin', 'create', '--email', 'a@b.co', '--password=p'],
      'the password is read from a prompt or standard input, never from arguments',
    ],
    [
      ['admin', 'create', '--email', 'a@b.co', '--password'],
      'the password is read from a prompt or standard input, never from arguments',
    ],
    [
      ['admin', 'create', '--email', 'a@b.co', '-p'],
      "Unknown option '-p'\nusage: admin create|reset-password --email E",
    ],
    // token create
    [['token'], TOKEN_USAGE],
    [['token', 'list'], TOKEN_USAGE],
    [['token', 'create'], `token create needs --name NAME\n${TOKEN_USAGE}`],
    [['token', 'create', '--name', ''], `token create needs --name NAME\n${TOKEN_USAGE}`],
    [['token', 'create', '--scope'], `token create needs --name NAME\n${TOKEN_USAGE}`],
    [['token', 'create', '--name'], '--name needs a value'],
    [['token', 'create', '--name', '--scope', 'query'], '--name needs a value'],
    [['token', 'create', '--name', 'ci', '--scope'], '--scope needs a value'],
    [
      ['token', 'create', '--name', 'ci', '--scope', 'query,admin'],
      `Unknown token scope "admin": the scopes are query, ingest\n${TOKEN_USAGE}`,
    ],
    [
      ['token', 'create', '--name', 'ci', '--scope', ''],
      `Unknown token scope "": the scopes are query, ingest\n${TOKEN_USAGE}`,
    ],
    [['token', 'create', '--name', 'ci', '--help'], `Unknown option '--help'\n${TOKEN_USAGE}`],
    [
      ['token', 'create', '--name', 'ci', 'extra'],
      `Unexpected argument 'extra'. This command does not take positional arguments\n${TOKEN_USAGE}`,
    ],
    [['token', 'create', '--name', 'ci', '--space'], '--space needs a value'],
    ...['0', 'x', '-3', '1.5', '2147483648'].map((space): [string[], string] => [
      ['token', 'create', '--name', 'ci', '--space', space],
      '--space must be a space id (a whole number from 1 to 2147483647)',
    ]),
    [['token', 'create', '--name', 'ci', '--expires'], '--expires needs a value'],
    [
      ['token', 'create', '--name', 'ci', '--expires', 'soon'],
      `--expires "soon" is not understood: ${EXPIRIES}\n${TOKEN_USAGE}`,
    ],
    [
      ['token', 'create', '--name', 'ci', '--expires', '2020-01-31'],
      `--expires "2020-01-31" is in the past: ${EXPIRIES}\n${TOKEN_USAGE}`,
    ],
    [
      ['token', 'create', '--name', 'ci', '--expires', '2999-01-31'],
      `--expires "2999-01-31" is more than 5 years ahead: ${EXPIRIES}\n${TOKEN_USAGE}`,
    ],
    // import
    [['import'], 'usage: import FILE [--batch-size N]'],
    [['import', '--batch-size', '5', FILE], 'usage: import FILE [--batch-size N]'],
    [['import', '/no/such.ndjson', '--batch-size'], 'no such file: /no/such.ndjson'],
    [['import', FILE, '--batch-size'], '--batch-size needs a value'],
    [['import', FILE, '--batch-size', '0'], '--batch-size must be a positive whole number'],
    [['import', FILE, '--batch-size', '-5'], '--batch-size must be a positive whole number'],
    [['import', FILE, '--batch-size', '1e3'], '--batch-size must be a positive whole number'],
    [
      ['import', FILE, '--batchsize', '5'],
      "Unknown option '--batchsize'\nusage: import FILE [--batch-size N]",
    ],
    // export
    [['export'], 'usage: export --space ID [--sprint ID]'],
    [['export', '--sprint'], 'usage: export --space ID [--sprint ID]'],
    [['export', '--space'], '--space needs a value'],
    [['export', '--space', '0'], '--space must be a positive whole number'],
    [['export', '--space', 'x', '--sprint'], '--space must be a positive whole number'],
    [['export', '--space', '1', '--sprint'], '--sprint needs a value'],
    [['export', '--space', '1', '--sprint', '0'], '--sprint must be a positive whole number'],
    [
      ['export', '--space', '1', '--format', 'csv'],
      "Unknown option '--format'\nusage: export --space ID [--sprint ID]",
    ],
    // demo, setup-demo, schema
    [['demo', '--entries'], '--entries needs a value'],
    [['demo', '--entries', '0'], '--entries must be a positive whole number'],
    [
      ['demo', '10'],
      "Unexpected argument '10'. This command does not take positional arguments\nusage: demo [--entries N]",
    ],
    [['setup-demo', '--entries', 'abc'], '--entries must be a positive whole number'],
    [['setup-demo', '--entry', '5'], "Unknown option '--entry'\nusage: setup-demo [--entries N]"],
    [['schema', '--out'], '--out needs a value'],
    [
      ['schema', '--out', 'a.gql', 'b.gql'],
      "Unexpected argument 'b.gql'. This command does not take positional arguments\nusage: schema [--profile spec|extended|galxe] [--out FILE]",
    ],
    [['schema', '--profile', 'strict'], '--profile must be one of spec, extended, galxe'],
  ])('%j: a usage error on stderr, exit 2', async (args, message) => {
    expect(await cli(...args)).toEqual({ code: 2, stdout: '', stderr: `${message}\n` });
  });

  it('reads the flags of each command, with their defaults', () => {
    expect(migrateCommand.parse([])).toEqual({ repair: false });
    expect(migrateCommand.parse(['--repair'])).toEqual({ repair: true });
    expect(adminCommand.parse(['create', '--email', 'a@b.co'])).toEqual({
      action: 'create',
      email: 'a@b.co',
    });
    expect(adminCommand.parse(['reset-password', '--email', 'a@b.co'])).toEqual({
      action: 'reset-password',
      email: 'a@b.co',
    });
    const deployment = { spaceId: null, expiresAt: null };
    expect(tokenCreateCommand.parse(['create', '--name', 'ci'])).toEqual({
      name: 'ci',
      scopes: ['query'],
      ...deployment,
    });
    expect(
      tokenCreateCommand.parse(['create', '--scope', ' ingest, query', '--name', 'ci']),
    ).toEqual({ name: 'ci', scopes: ['ingest', 'query'], ...deployment });
    const before = Date.now();
    const scoped = tokenCreateCommand.parse([
      'create',
      '--name',
      'ci',
      '--space',
      '3',
      '--expires',
      '30d',
    ]);
    expect(scoped).toMatchObject({ name: 'ci', scopes: ['query'], spaceId: 3 });
    expect(scoped.expiresAt! - before).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(scoped.expiresAt! - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    const nextYear = new Date().getUTCFullYear() + 1;
    expect(
      tokenCreateCommand.parse(['create', '--name', 'ci', '--expires', `${nextYear}-06-30`]),
    ).toMatchObject({ spaceId: null, expiresAt: Date.parse(`${nextYear}-06-30T23:59:59.999Z`) });
    expect(tokenCreateCommand.parse(['create', '--name', 'ci', '--expires', 'never'])).toEqual({
      name: 'ci',
      scopes: ['query'],
      ...deployment,
    });
    expect(importCommand.parse([FILE])).toEqual({ file: FILE, batchSize: 200_000 });
    expect(importCommand.parse([FILE, '--batch-size', '500'])).toEqual({
      file: FILE,
      batchSize: 500,
    });
    expect(exportCommand.parse(['--space', '3'])).toEqual({ spaceId: 3, sprintId: null });
    expect(exportCommand.parse(['--sprint', '12', '--space', '3'])).toEqual({
      spaceId: 3,
      sprintId: 12,
    });
    expect(demoCommand.parse([])).toEqual({ entries: 5000 });
    expect(demoCommand.parse(['--entries', '20'])).toEqual({ entries: 20 });
    expect(setupDemoCommand.parse([])).toEqual({ entries: 5000 });
    expect(setupDemoCommand.parse(['--entries', '20'])).toEqual({ entries: 20 });
    expect(schemaCommand.parse([])).toEqual({ out: undefined });
    expect(schemaCommand.parse(['--out', 'schema.gql'])).toEqual({ out: 'schema.gql' });
    expect(schemaCommand.parse(['--profile', 'galxe', '--out', 'schema.galxe.gql'])).toEqual({
      out: 'schema.galxe.gql',
      profile: 'galxe',
    });
  });

  it('takes --flag=value too, and the first of a repeated flag (as before)', () => {
    const deployment = { spaceId: null, expiresAt: null };
    expect(tokenCreateCommand.parse(['create', '--name=ci', '--scope=ingest'])).toEqual({
      name: 'ci',
      scopes: ['ingest'],
      ...deployment,
    });
    expect(tokenCreateCommand.parse(['create', '--name', 'a', '--name', 'b'])).toEqual({
      name: 'a',
      scopes: ['query'],
      ...deployment,
    });
    expect(tokenCreateCommand.parse(['create', '--name', '-dash'])).toEqual({
      name: '-dash',
      scopes: ['query'],
      ...deployment,
    });
    expect(tokenCreateCommand.parse(['create', '--name=ci', '--space=12'])).toMatchObject({
      spaceId: 12,
    });
    expect(demoCommand.parse(['--entries=7'])).toEqual({ entries: 7 });
  });

  it('lists every command in the help under its usage line', () => {
    expect(COMMANDS.map((command) => command.name)).toEqual([
      'migrate',
      'admin',
      'token',
      'import',
      'export',
      'backup',
      'demo',
      'setup-demo',
      'schema',
    ]);
    for (const command of COMMANDS)
      expect(command.help.startsWith(`  ${command.usage}`)).toBe(true);
  });

  it('exits 1 for a database error, told by its message and code', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(exitCodeFor(busy)).toBe(1);
    expect(stderr).toBe('database is locked (SQLITE_BUSY)\n');
  });
});
