// Node releases for the tests, from the npm registry: the `node` package (`npx node@24`) installs
// its binary from the platform package `node-<platform>-<arch>`, which also carries the headers
// that native addons (better-sqlite3) compile against, so that package is taken directly.
// `nodeFor(major)` gives the binary and the environment that puts it (and its headers) first.
/* eslint-disable */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function nodeFor(major) {
  if (Number(process.versions.node.split('.')[0]) === major)
    return { major, bin: process.execPath, version: process.version, env: {} };
  const prefix = path.join(os.homedir(), '.cache', 'loyalty-node', String(major));
  const name = `node-${process.platform}-${process.arch}`;
  const home = path.join(prefix, 'node_modules', name);
  const bin = path.join(home, 'bin', 'node');
  if (!fs.existsSync(bin))
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--ignore-scripts',
        '--no-save',
        '--no-audit',
        '--no-fund',
        `${name}@${major}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  return {
    major,
    bin,
    version,
    env: {
      PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH}`,
      npm_config_nodedir: home,
    },
  };
}

module.exports = { nodeFor };

if (require.main === module) {
  const node = nodeFor(Number(process.argv[2]));
  console.log(node.bin);
}
