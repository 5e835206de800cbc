import { AccessTokensService } from '../../../auth/access-tokens.service';
import { SpacesService } from '../../../spaces/spaces.service';
import { withContext } from '../support/app-context';
import { parseFlags, positiveInt } from '../support/cli-args';
import { loadDemo } from '../support/demo-load';
import { note } from '../support/output';
import type { Command } from './command';

export const setupDemoCommand: Command<{ entries: number }> = {
  name: 'setup-demo',
  usage: 'setup-demo [--entries N]',
  help: `  setup-demo [--entries N]    migrate, load the demo dataset into an empty database, create a
                              token and print a ready-to-paste curl line`,
  parse(args) {
    const option = parseFlags(args, ['entries'], this.usage);
    return { entries: positiveInt(option('entries'), '--entries', 5000) };
  },
  async run({ entries }, config) {
    const token = await withContext(config, async (app) => {
      if (!(await app.get(SpacesService).findSpace(1))) await loadDemo(app, entries);
      else note('Database already holds data: demo load skipped.');
      return app.get(AccessTokensService).create(`demo ${new Date().toISOString()}`, undefined, {
        createdBy: 'cli',
      });
    });
    const url = `http://localhost:${config.port}/query`;
    note('');
    note(`Access token (shown once): ${token.token}`);
    note('Try it once the server below is listening:');
    note(
      `  curl -s ${url} -H 'Content-Type: application/json' -H 'access-token: ${token.token}' \\\n` +
        `    -d '{"query":"{ space(id: 1) { id name loyaltyPointsRanks { totalCount pageInfo { hasNextPage endCursor } list { rank points address { address username } } } } }"}'`,
    );
    note(
      `Dashboard: http://localhost:${config.port}/dashboard, after npm run -s cli -- admin create --email you@example.com`,
    );
    note('');
    return 0;
  },
};
