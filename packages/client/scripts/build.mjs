// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its own declarations, for the
// "import" and "require" conditions of package.json's "exports". Node takes a .js file's format
// from the nearest package.json, so dist/cjs gets one saying "commonjs" (the package is "module").
// TypeScript comes from the repository root: the package itself has no dependencies of any kind.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(`${here}/dist`, { recursive: true, force: true });
for (const project of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', `${here}/${project}`], { stdio: 'inherit' });
}
writeFileSync(`${here}/dist/cjs/package.json`, '{ "type": "commonjs" }\n');
