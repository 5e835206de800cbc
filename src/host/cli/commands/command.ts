import type { AppConfig } from '../../config/app-config';

/** One command of `loyalty <command>`: its arguments are checked by `parse` before any database. */
export interface Command<Options = unknown> {
  /** The first word on the command line. */
  readonly name: string;
  /** What follows "usage: " in its usage errors, e.g. "export --space ID [--sprint ID]". */
  readonly usage: string;
  /** Its entry under "Commands:" in the help text, exactly as printed. */
  readonly help: string;
  /** The arguments after the name; throws UsageError (exit 2). */
  parse(args: string[]): Options;
  /** Does the work; resolves to the exit code. */
  run(options: Options, config: AppConfig): Promise<number>;
}
