import { parseArgs } from 'node:util';

/** A mistake on the command line: its message goes to stderr and the exit code is 2. */
export class UsageError extends Error {}

/** One flag's value; "--flag needs a value" is thrown when it is read, so checks keep their order. */
export type FlagReader<Flag extends string> = (flag: Flag) => string | undefined;

/**
 * Parses `--flag value` and `--flag=value` options (no positionals), strictly: an unknown option
 * or a stray argument is a usage error that ends with `usage: <usage>`.
 */
export function parseFlags<Flag extends string>(
  args: readonly string[],
  flags: readonly Flag[],
  usage: string,
): FlagReader<Flag> {
  const isFlag = (name: string): name is Flag => (flags as readonly string[]).includes(name);
  const seen = new Set<Flag>();
  const missing = new Set<Flag>();
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (!isFlag(name)) {
      joined.push(arg); // --flag=value, or for parseArgs to refuse
      continue;
    }
    // As before: the next argument is the value unless it starts with "--" (so "-5" is a value).
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) {
      if (!seen.has(name)) missing.add(name);
    } else {
      joined.push(`${arg}=${value}`);
      i++;
    }
    seen.add(name);
  }
  let values: Record<string, string[] | undefined>;
  try {
    const options = Object.fromEntries(
      flags.map((flag) => [flag, { type: 'string', multiple: true } as const]),
    );
    ({ values } = parseArgs({ args: joined, options, strict: true, allowPositionals: false }));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'))
      throw new UsageError(`${(error as Error).message}\nusage: ${usage}`);
    throw error;
  }
  return (flag) => {
    if (missing.has(flag)) throw new UsageError(`--${flag} needs a value`);
    // The first occurrence counts, as it always did.
    return values[flag]?.[0];
  };
}

/** A flag's value as a whole number of at least 1, or `fallback` when the flag is absent. */
export function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${name} must be a positive whole number`);
  return Number(value);
}
