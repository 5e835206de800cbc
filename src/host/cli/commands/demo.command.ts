import { withContext } from '../support/app-context';
import { parseFlags, positiveInt } from '../support/cli-args';
import { loadDemo } from '../support/demo-load';
import type { Command } from './command';

export const demoCommand: Command<{ entries: number }> = {
  name: 'demo',
  usage: 'demo [--entries N]',
  help: `  demo [--entries N]          load the demo dataset: 3 spaces with sprints, quests and N
                              addresses with points each (default 5000)`,
  parse(args) {
    const option = parseFlags(args, ['entries'], this.usage);
    return { entries: positiveInt(option('entries'), '--entries', 5000) };
  },
  async run({ entries }, config) {
    await withContext(config, (app) => loadDemo(app, entries));
    return 0;
  },
};
