#!/usr/bin/env node
// Part of `npm run build`: fails when the client's generated types are stale or any query it sends
// is not valid against the committed schema.gql. With the generated types themselves, this is
// what makes a schema change that breaks the client break the build.
/* eslint-disable */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { buildSchema, parse, validate } = require('graphql');
const { generate } = require('./generate-client-types');

const root = join(__dirname, '..');
const sdl = readFileSync(join(root, 'schema.gql'), 'utf8');
let failed = false;
const client = join(root, 'packages', 'client');
if (readFileSync(join(client, 'src', 'schema-types.generated.ts'), 'utf8') !== generate(sdl)) {
  console.error('packages/client/src/schema-types.generated.ts is stale: run npm run client:types');
  failed = true;
}
const schema = buildSchema(sdl);
const { CLIENT_DOCUMENTS } = require(join(client, 'dist', 'cjs', 'client.js'));
for (const [name, document] of Object.entries(CLIENT_DOCUMENTS)) {
  for (const error of validate(schema, parse(document))) {
    console.error(`client query ${name} does not match schema.gql: ${error.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
