import { AdminsService } from '../../dashboard/admins.service';
import { withContext } from '../support/app-context';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import { readPassword } from '../support/password-prompt';
import type { Command } from './command';

export const adminCreateCommand: Command<{ email: string }> = {
  name: 'admin',
  usage: 'admin create --email E',
  help: `  admin create --email E      create a dashboard admin; the password is read from a prompt, or
                              from the first line of standard input (never from the command line)`,
  parse(args) {
    if (args[0] !== 'create') throw new UsageError(`usage: ${this.usage}`);
    // --password is known to the parser only so that it gets the message below.
    const option = parseFlags(args.slice(1), ['email', 'password'], this.usage);
    const email = option('email');
    if (!email) throw new UsageError('admin create needs --email E');
    if (args.some((arg) => arg === '--password' || arg.startsWith('--password=')))
      throw new UsageError(
        'the password is read from a prompt or standard input, never from arguments',
      );
    return { email };
  },
  async run({ email }, config) {
    const password = await readPassword();
    const created = await withContext(config, (app) =>
      app.get(AdminsService).create(email, password),
    );
    note(`Created dashboard admin ${created.email}. Sign in at /dashboard.`);
    return 0;
  },
};
