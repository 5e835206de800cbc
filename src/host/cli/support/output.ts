/** Notes for people go to stderr, so stdout carries only what a script asked for. */
export const note = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/**
 * A database's error as its message and code (what an operator acts on); anything else, such as a
 * bug, with its stack.
 */
export function describeFailure(cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (cause instanceof Error && typeof code === 'string')
    return cause.message.includes(code) ? cause.message : `${cause.message} (${code})`;
  return cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
}

/**
 * The package a failure says is missing, when it is one: a bare module that `require` or `import`
 * could not find, or a database driver TypeORM could not load. The library's peers are the host's
 * to install, and the standalone service's extras are optional, so this is a setup mistake the
 * user fixes with one `npm install`, not a bug.
 */
export function missingPackageOf(cause: unknown): string | undefined {
  // Duck-typed: the loader's errors may come from another realm (jest's sandbox, a vm context).
  const { name, code, message } = (cause ?? {}) as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
  };
  if (typeof message !== 'string') return undefined;
  if (name === 'DriverPackageNotInstalledError') {
    const driver = /npm install ([^\s"']+)/.exec(message)?.[1];
    if (driver) return driver;
  }
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const specifier = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
  if (!specifier || specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export const missingPackageNote = (name: string): string =>
  `This command needs the package "${name}", which is not installed: npm install ${name}`;
