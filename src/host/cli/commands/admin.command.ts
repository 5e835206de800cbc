import {
  AdminInputError,
  AdminsService,
  normalizeEmail,
} from '../../dashboard/accounts/admins.service';
import { AuditService } from '../../dashboard/audit/audit.service';
import { withContext } from '../support/app-context';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import { readPassword } from '../support/password-prompt';
import type { Command } from './command';

type AdminAction = 'create' | 'reset-password';
const USAGE = 'admin create|reset-password --email E';

export const adminCommand: Command<{ action: AdminAction; email: string }> = {
  name: 'admin',
  usage: USAGE,
  help: `  admin create|reset-password --email E
                              create a dashboard operator, or set a new password for a
                              forgotten one (every session of that account ends); the password
                              is read from a prompt or the first line of standard input, never
                              from the command line`,
  parse(args) {
    const action = args[0];
    if (action !== 'create' && action !== 'reset-password') throw new UsageError(`usage: ${USAGE}`);
    // --password is known to the parser only so that it gets the message below.
    const option = parseFlags(args.slice(1), ['email', 'password'], USAGE);
    const email = option('email');
    if (!email) throw new UsageError(`admin ${action} needs --email E`);
    if (args.some((arg) => arg === '--password' || arg.startsWith('--password=')))
      throw new UsageError(
        'the password is read from a prompt or standard input, never from arguments',
      );
    return { action, email };
  },
  async run({ action, email }, config) {
    // The email is checked before the password is asked for.
    const normalized = normalizeEmail(email);
    const password = await readPassword();
    if (action === 'create') {
      const created = await withContext(config, async (app) => {
        const account = await app.get(AdminsService).create(normalized, password);
        await app.get(AuditService).record({
          actor: 'cli',
          action: 'account.create',
          target: account.email,
          detail: { operator: true },
        });
        return account;
      });
      note(`Created dashboard operator ${created.email}. Sign in at /dashboard.`);
      return 0;
    }
    await withContext(config, async (app) => {
      const admins = app.get(AdminsService);
      const account = await admins.findByEmail(normalized);
      if (!account) throw new AdminInputError(`No account has the email ${normalized}`);
      await admins.setPassword(account.id, password);
      await app.get(AuditService).record({
        actor: 'cli',
        action: 'account.reset-password',
        target: account.email,
      });
    });
    note(`Set a new password for ${normalized}; its sessions were signed out.`);
    return 0;
  },
};
