import { AccessTokensService } from '../../../auth/access-tokens.service';
import { parseTokenExpiry } from '../../../auth/token-expiry';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes, TokenScope } from '../../../auth/token-scopes';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { MAX_INT_ID } from '../../../records/ingest-record';
import { SpacesService } from '../../../spaces/spaces.service';
import { tokenTarget } from '../../dashboard/accounts/token-access';
import { AuditService } from '../../dashboard/audit/audit.service';
import { withContext } from '../support/app-context';
import { parseFlags, UsageError } from '../support/cli-args';
import { note } from '../support/output';
import type { Command } from './command';

interface TokenCreateOptions {
  name: string;
  scopes: TokenScope[];
  /** null: a deployment token. */
  spaceId: number | null;
  /** Epoch ms; null: never. */
  expiresAt: number | null;
}

/** `--space ID`: a space id, as records carry them. */
function parseSpaceFlag(value: string): number {
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!(id >= 1 && id <= MAX_INT_ID))
    throw new UsageError(`--space must be a space id (a whole number from 1 to ${MAX_INT_ID})`);
  return id;
}

export const tokenCreateCommand: Command<TokenCreateOptions> = {
  name: 'token',
  usage:
    'token create --name NAME [--scope query,ingest] [--space ID] [--expires 30d|90d|never|YYYY-MM-DD]',
  help: `  token create --name NAME [--scope query,ingest] [--space ID] [--expires 30d|90d|never|YYYY-MM-DD]
                              create an API access token with these scopes (comma-separated;
                              default query), for one space (default: the whole deployment),
                              expiring after 30 or 90 days, at the end of a day (UTC) or never
                              (default); prints the token alone on stdout`,
  parse(args) {
    const usage = `usage: ${this.usage}`;
    if (args[0] !== 'create') throw new UsageError(usage);
    const option = parseFlags(args.slice(1), ['name', 'scope', 'space', 'expires'], this.usage);
    const name = option('name');
    if (!name) throw new UsageError(`token create needs --name NAME\n${usage}`);
    const scopeList = option('scope');
    const space = option('space');
    const expires = option('expires');
    try {
      const scopes =
        scopeList === undefined
          ? [...DEFAULT_TOKEN_SCOPES]
          : parseTokenScopes(scopeList.split(',').map((scope) => scope.trim()));
      return {
        name,
        scopes,
        spaceId: space === undefined ? null : parseSpaceFlag(space),
        expiresAt: expires === undefined ? null : parseTokenExpiry(expires),
      };
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      throw new UsageError(`${error.message.replace(/^Token expiry/, '--expires')}\n${usage}`);
    }
  },
  async run({ name, scopes, spaceId, expiresAt }, config) {
    const created = await withContext(config, async (app) => {
      if (spaceId !== null && !(await app.get(SpacesService).findSpace(spaceId)))
        throw new UsageError(
          `--space ${spaceId}: there is no space ${spaceId} (create it first: import or POST /ingest a space record)`,
        );
      const token = await app.get(AccessTokensService).create(name, scopes, {
        spaceId,
        expiresAt,
        uniqueName: true,
        createdBy: 'cli',
      });
      await app.get(AuditService).record({
        actor: 'cli',
        action: 'token.create',
        spaceId,
        target: tokenTarget(token),
        detail: { scopes: token.scopes, expiresAt: token.expiresAt },
      });
      return token;
    }).catch((error: unknown) => {
      if (error instanceof LoyaltyException) throw new UsageError(error.message);
      throw error;
    });
    // The token alone on stdout, so that TOKEN=$(npm run -s cli -- token create ...) works.
    process.stdout.write(`${created.token}\n`);
    const owner = created.spaceId === null ? 'the whole deployment' : `space ${created.spaceId}`;
    const expiry = created.expiresAt === null ? 'never expires' : `expires ${created.expiresAt}`;
    note(
      `Created token "${created.name}" (${created.prefix}...) for ${owner} with scopes ${created.scopes.join(', ')}; it ${expiry}. It is shown only this once: store it now.`,
    );
    return 0;
  },
};
