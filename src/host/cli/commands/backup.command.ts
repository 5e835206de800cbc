import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { fileItWouldCreate } from '../../../storage/connection/database-url';
import { engineOfConfig } from '../../../storage/engines';
import { hostDataSourceOptions } from '../../config/host-data-source';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import type { Command } from './command';

export const backupCommand: Command<{ out: string }> = {
  name: 'backup',
  usage: 'backup --out FILE',
  help: `  backup --out FILE           copy an embedded (SQLite) database, as of one moment, into a new
                              FILE while the service goes on writing; database servers are
                              backed up with their own tools (docs/operations.md, Backup)`,
  parse(args) {
    const option = parseFlags(args, ['out'], this.usage);
    const out = option('out');
    if (!out) throw new UsageError(`usage: ${this.usage}`);
    return { out: resolve(out) };
  },
  async run({ out }, config) {
    const backup = engineOfConfig(config.database).onlineBackup;
    if (!backup)
      throw new UsageError(
        "backup copies embedded databases only: back a database server up with its own dump tool, as docs/operations.md's Backup section shows",
      );
    const missing = fileItWouldCreate(config.database);
    if (missing !== undefined)
      throw new UsageError(`backup: there is no database at ${missing} (see --database-url)`);
    if (existsSync(out)) throw new UsageError(`backup: ${out} already exists: give a new file`);
    // A data source without the module: a backup reads no table, and takes an old schema too.
    const dataSource = new DataSource(
      await hostDataSourceOptions(config.database, { migrationsRun: false }),
    );
    await dataSource.initialize();
    try {
      const started = Date.now();
      backup(dataSource, out);
      note(`Backed up to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    } finally {
      await dataSource.destroy();
    }
    return 0;
  },
};
