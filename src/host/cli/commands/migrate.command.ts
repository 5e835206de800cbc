import { runMigrationsLocked } from '../../../storage/connection/run-migrations';
import { createCliContext, dataSourceOf } from '../support/app-context';
import { parseFlags } from '../support/cli-args';
import { note } from '../support/output';
import type { Command } from './command';

export const migrateCommand: Command<void> = {
  name: 'migrate',
  usage: 'migrate',
  help: '  migrate                     apply pending database migrations',
  parse(args) {
    parseFlags(args, [], this.usage);
  },
  async run(_options, config) {
    const app = await createCliContext(config);
    try {
      const applied = await runMigrationsLocked(dataSourceOf(app), { transaction: 'each' });
      note(
        applied.length
          ? `Applied ${applied.map((m) => m.name).join(', ')}`
          : 'Database is up to date',
      );
    } finally {
      await app.close();
    }
    return 0;
  },
};
