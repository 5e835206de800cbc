import { dirname, join, relative } from 'node:path';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import {
  databaseFilesIn,
  fileItWouldCreate,
  type DatabaseConfig,
} from '../../storage/connection/database-url';
import { IngestStopped } from '../../ingest/record-stream';
import { ConfigError, loadConfig } from '../config/app-config';
import { AdminInputError } from '../dashboard/accounts/admins.service';
import { UsageError } from './support/cli-args';
import { COMMANDS, HELP } from './commands';
import { describeFailure, missingPackageNote, missingPackageOf, note } from './support/output';

/**
 * Commands meant to start from a new database (or none), or that refuse a missing one (backup):
 * no warning that a new one is being made.
 */
const MAKE_THEIR_DATABASE = new Set(['demo', 'setup-demo', 'schema', 'backup']);

/** Runs `loyalty <args>`; resolves to the exit code, or rejects with what `exitCodeFor` tells. */
export async function run(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const { databaseUrl, args: commandArgs } = takeDatabaseUrl(rest);
  // The configuration is checked before the command's arguments, as it always was.
  const config = withFlagNamed(databaseUrl !== undefined, () =>
    loadConfig(
      databaseUrl === undefined ? process.env : { ...process.env, DATABASE_URL: databaseUrl },
    ),
  );
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"\n\n${HELP}`);
  const options = command.parse(commandArgs);
  if (!MAKE_THEIR_DATABASE.has(command.name) && !databaseUrl && !process.env.DATABASE_URL)
    warnOfNewDefaultDatabase(config.database);
  return command.run(options, config);
}

/** A bad URL given as --database-url is told as that flag's, not as the variable's. */
function withFlagNamed<T>(fromFlag: boolean, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!fromFlag || !(error instanceof ConfigError)) throw error;
    throw new UsageError(error.message.replace(/\bDATABASE_URL:/g, '--database-url:'));
  }
}

/** `--database-url URL` (or `=URL`), wherever it stands among a command's arguments. */
function takeDatabaseUrl(args: string[]): { databaseUrl?: string; args: string[] } {
  const rest: string[] = [];
  let databaseUrl: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--database-url' || arg.startsWith('--database-url=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[++i];
      if (!value || value.startsWith('--'))
        throw new UsageError(
          '--database-url needs a URL (sqlite:FILE, mysql://..., postgres://...)',
        );
      if (databaseUrl !== undefined) throw new UsageError('--database-url is given twice');
      databaseUrl = value;
    } else {
      rest.push(arg);
    }
  }
  return { databaseUrl, args: rest };
}

/**
 * Neither --database-url nor DATABASE_URL, and the default SQLite file is not there yet: the
 * command is about to make a new database, which a service or host using another one never
 * reads. Said on stderr, with the SQLite files that are there (a host's may be one of them).
 */
function warnOfNewDefaultDatabase(database: DatabaseConfig): void {
  const file = fileItWouldCreate(database);
  if (file === undefined) return;
  const nearby = [...new Set([process.cwd(), dirname(file)])].flatMap((folder) =>
    databaseFilesIn(folder).map((name) => relative(process.cwd(), join(folder, name))),
  );
  note(
    `No DATABASE_URL: making a new database at ${relative(process.cwd(), file)}. A service or ` +
      'host that uses another database will not see what this command does: give its URL with ' +
      '--database-url or DATABASE_URL.' +
      (nearby.length > 0 ? ` Database files here: ${nearby.join(', ')}.` : ''),
  );
}

/** Tells a failure on stderr: 2 for the user's mistakes, 1 for everything else. */
export function exitCodeFor(error: unknown): number {
  if (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof AdminInputError ||
    error instanceof LoyaltyException
  ) {
    note(error.message);
    return 2;
  }
  const missing = missingPackageOf(error);
  if (missing) {
    note(missingPackageNote(missing));
    return 2;
  }
  // A stopped demo load says where; a database's error is told in its own words.
  if (error instanceof IngestStopped)
    note(`Stopped at record ${error.line}: ${describeFailure(error.cause)}`);
  else note(describeFailure(error));
  return 1;
}
