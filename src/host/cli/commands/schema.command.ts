import { writeFileSync } from 'node:fs';
import { SCHEMA_PROFILES, SchemaProfile } from '../../../common/graphql/schema-profile';
import { parseFlags, UsageError } from '../support/cli-args';
import { printSchemaOf } from '../support/schema-printer';
import type { Command } from './command';

export const schemaCommand: Command<{
  out: string | undefined;
  profile: SchemaProfile | undefined;
}> = {
  name: 'schema',
  usage: 'schema [--profile spec|extended|galxe] [--out FILE]',
  help: `  schema [--profile spec|extended|galxe] [--out FILE]
                              print the GraphQL schema (SDL) of a profile (default: the one
                              SCHEMA_PROFILE sets), or write it to FILE`,
  parse(args) {
    const option = parseFlags(args, ['out', 'profile'], this.usage);
    const profile = option('profile');
    if (profile !== undefined && !(SCHEMA_PROFILES as readonly string[]).includes(profile))
      throw new UsageError(`--profile must be one of ${SCHEMA_PROFILES.join(', ')}`);
    return { out: option('out'), profile: profile as SchemaProfile | undefined };
  },
  async run({ out, profile }, config) {
    const sdl = await printSchemaOf({ ...config, schemaProfile: profile ?? config.schemaProfile });
    if (out) writeFileSync(out, sdl);
    else process.stdout.write(sdl);
    return 0;
  },
};
