#!/usr/bin/env node
import { missingPackageNote, missingPackageOf, note } from './support/output';

/*
 * The `loyalty` binary. The command line loads behind a dynamic import, so that in a host that
 * lacks one of the library's peers the user reads which package to install (exit 2), not a stack.
 */
import('./cli').then(
  ({ run, exitCodeFor }) =>
    run(process.argv.slice(2)).then(
      (code) => process.exit(code),
      (error: unknown) => process.exit(exitCodeFor(error)),
    ),
  (error: unknown) => {
    const missing = missingPackageOf(error);
    if (!missing) throw error;
    note(missingPackageNote(missing));
    process.exit(2);
  },
);
