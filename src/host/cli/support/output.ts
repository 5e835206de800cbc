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
