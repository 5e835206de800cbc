import { AccessTokensService } from '../../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes, TokenScope } from '../../../auth/token-scopes';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { withContext } from '../support/app-context';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import type { Command } from './command';

export const tokenCreateCommand: Command<{ name: string; scopes: TokenScope[] }> = {
  name: 'token',
  usage: 'token create --name NAME [--scope query,ingest]',
  help: `  token create --name NAME [--scope query,ingest]
                              create an API access token with these scopes (comma-separated;
                              default query); prints the token alone on stdout`,
  parse(args) {
    const usage = `usage: ${this.usage}`;
    if (args[0] !== 'create') throw new UsageError(usage);
    const option = parseFlags(args.slice(1), ['name', 'scope'], this.usage);
    const name = option('name');
    if (!name) throw new UsageError(`token create needs --name NAME\n${usage}`);
    const scopeList = option('scope');
    try {
      const scopes =
        scopeList === undefined
          ? [...DEFAULT_TOKEN_SCOPES]
          : parseTokenScopes(scopeList.split(',').map((scope) => scope.trim()));
      return { name, scopes };
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      throw new UsageError(`${error.message}\n${usage}`);
    }
  },
  async run({ name, scopes }, config) {
    const created = await withContext(config, (app) =>
      app.get(AccessTokensService).create(name, scopes),
    ).catch((error: unknown) => {
      if (error instanceof LoyaltyException) throw new UsageError(error.message);
      throw error;
    });
    // The token alone on stdout, so that TOKEN=$(npm run -s cli -- token create ...) works.
    process.stdout.write(`${created.token}\n`);
    note(
      `Created token "${created.name}" (${created.prefix}...) with scopes ${created.scopes.join(', ')}. It is shown only this once: store it now.`,
    );
    return 0;
  },
};
