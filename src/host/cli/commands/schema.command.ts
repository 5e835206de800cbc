import { writeFileSync } from 'node:fs';
import { parseFlags } from '../support/cli-args';
import { printSchemaOf } from '../support/schema-printer';
import type { Command } from './command';

export const schemaCommand: Command<{ out: string | undefined }> = {
  name: 'schema',
  usage: 'schema [--out FILE]',
  help: '  schema [--out FILE]         print the GraphQL schema (SDL), or write it to FILE',
  parse(args) {
    const option = parseFlags(args, ['out'], this.usage);
    return { out: option('out') };
  },
  async run({ out }, config) {
    const sdl = await printSchemaOf(config);
    if (out) writeFileSync(out, sdl);
    else process.stdout.write(sdl);
    return 0;
  },
};
