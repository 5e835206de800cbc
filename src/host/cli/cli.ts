import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { IngestStopped } from '../../ingest/record-stream';
import { ConfigError, loadConfig } from '../config/app-config';
import { AdminInputError } from '../dashboard/accounts/admins.service';
import { UsageError } from './support/cli-args';
import { COMMANDS, HELP } from './commands';
import { describeFailure, missingPackageNote, missingPackageOf, note } from './support/output';

/** Runs `loyalty <args>`; resolves to the exit code, or rejects with what `exitCodeFor` tells. */
export async function run(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // The configuration is checked before the command's arguments, as it always was.
  const config = loadConfig();
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"\n\n${HELP}`);
  return command.run(command.parse(rest), config);
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
