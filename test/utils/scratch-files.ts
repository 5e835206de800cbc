import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs: string[] = [];

/**
 * A path named `name` in a new directory of its own under the system's temporary directory.
 * Every such directory is removed after the spec file that made it (jest loads this module once
 * per spec file, so the hook below is one of that file's own).
 */
export function scratchPath(prefix: string, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return join(dir, name);
}

afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
