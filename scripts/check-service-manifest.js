#!/usr/bin/env node
// Part of `npm run lint`: packages/service/package.json (what the standalone service and its image
// install) pins every package at the version the root's tests run, so the image runs what was
// tested. The image check (scripts/check-image.js) proves the set is complete by booting it.
/* eslint-disable */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const read = (file) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const rootPackage = read('package.json');
const service = read('packages/service/package.json');
const tested = { ...rootPackage.devDependencies, ...rootPackage.dependencies };
let failed = false;
for (const [name, version] of Object.entries(service.dependencies)) {
  if (tested[name] !== version) {
    console.error(
      `packages/service pins ${name}@${version}, the tests run ${name}@${tested[name] ?? '(none)'}`,
    );
    failed = true;
  }
}
for (const [name, version] of Object.entries(rootPackage.dependencies)) {
  if (!(name in service.dependencies)) {
    console.error(`packages/service lacks ${name}@${version}, a dependency of the library`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
