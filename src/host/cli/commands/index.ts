import { adminCommand } from './admin.command';
import { backupCommand } from './backup.command';
import type { Command } from './command';
import { demoCommand } from './demo.command';
import { exportCommand } from './export.command';
import { importCommand } from './import.command';
import { migrateCommand } from './migrate.command';
import { schemaCommand } from './schema.command';
import { setupDemoCommand } from './setup-demo.command';
import { tokenCreateCommand } from './token-create.command';

/** In the order the help text lists them. */
export const COMMANDS: readonly Command[] = [
  migrateCommand,
  adminCommand,
  tokenCreateCommand,
  importCommand,
  exportCommand,
  backupCommand,
  demoCommand,
  setupDemoCommand,
  schemaCommand,
];

export const HELP = `Usage: loyalty <command> [options]   (npm run cli -- <command> ...)

Commands:
${COMMANDS.map((command) => command.help).join('\n')}

Options for every command:
  --database-url URL          the database to work on (overrides DATABASE_URL; default
                              sqlite:./data/loyalty.sqlite): the one the service or host uses

Environment: DATABASE_URL, and the service's other settings; see README.md.`;
