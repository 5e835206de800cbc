import {
  repairAndRunMigrations,
  RepairRefusedError,
  runMigrationsLocked,
} from '../../../storage/connection/run-migrations';
import { createCliContext, dataSourceOf } from '../support/app-context';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import type { Command } from './command';

export const migrateCommand: Command<{ repair: boolean }> = {
  name: 'migrate',
  usage: 'migrate [--repair]',
  help: `  migrate [--repair]          apply pending database migrations; --repair first drops the
                              tables a migration cut off mid-way left behind, when every one of
                              them is empty (a table holding rows is never dropped)`,
  parse(args) {
    const repair = args.includes('--repair');
    parseFlags(
      args.filter((arg) => arg !== '--repair'),
      [],
      this.usage,
    );
    return { repair };
  },
  async run({ repair }, config) {
    const app = await createCliContext(config);
    try {
      const source = dataSourceOf(app);
      let applied;
      if (repair) {
        let repaired;
        try {
          repaired = await repairAndRunMigrations(source, { transaction: 'each' });
        } catch (error) {
          if (error instanceof RepairRefusedError) throw new UsageError(error.message);
          throw error;
        }
        for (const { migration, tables } of repaired.dropped)
          note(`Dropped the empty tables ${tables.join(', ')} that ${migration} had left`);
        applied = repaired.applied;
      } else {
        applied = await runMigrationsLocked(source, { transaction: 'each' });
      }
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
