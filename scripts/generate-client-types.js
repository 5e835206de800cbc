#!/usr/bin/env node
// Writes packages/client/src/schema-types.generated.ts from the committed schema.gql: one
// interface per object type, one union per enum. The client's result types are built from these,
// so a schema change that breaks the client breaks its build. A spec fails when the file is stale.
//   node scripts/generate-client-types.js [--check]
/* eslint-disable */
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const {
  buildSchema,
  isEnumType,
  isObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  isInputObjectType,
} = require('graphql');

const SCALARS = {
  String: 'string',
  ID: 'string',
  Int: 'number',
  Float: 'number',
  Boolean: 'boolean',
};

function tsType(type, nullable = true) {
  if (isNonNullType(type)) return tsType(type.ofType, false);
  const base = isListType(type)
    ? `Array<${tsType(type.ofType)}>`
    : isScalarType(type)
      ? (SCALARS[type.name] ?? 'unknown')
      : `Gql${type.name}`;
  return nullable ? `${base} | null` : base;
}

function generate(sdl) {
  const schema = buildSchema(sdl);
  const out = [
    '// Generated from schema.gql by scripts/generate-client-types.js. Do not edit.',
    '/* eslint-disable */',
    '',
  ];
  const names = Object.keys(schema.getTypeMap())
    .filter((n) => !n.startsWith('__'))
    .sort();
  for (const name of names) {
    const type = schema.getType(name);
    if (isEnumType(type)) {
      out.push(
        `export type Gql${name} = ${type
          .getValues()
          .map((v) => `'${v.name}'`)
          .join(' | ')};`,
        '',
      );
    } else if (isObjectType(type) || isInputObjectType(type)) {
      out.push(`export interface Gql${name} {`);
      for (const field of Object.values(type.getFields())) {
        out.push(`  ${field.name}: ${tsType(field.type)};`);
      }
      out.push('}', '');
      for (const field of isObjectType(type) ? Object.values(type.getFields()) : []) {
        if (field.args.length === 0) continue;
        const argsName = `Gql${name}${field.name[0].toUpperCase()}${field.name.slice(1)}Args`;
        out.push(`export interface ${argsName} {`);
        for (const arg of field.args) {
          const optional = isNonNullType(arg.type) ? '' : '?';
          out.push(`  ${arg.name}${optional}: ${tsType(arg.type)};`);
        }
        out.push('}', '');
      }
    }
  }
  return out.join('\n');
}

module.exports = { generate };
if (require.main !== module) return;

const root = join(__dirname, '..');
const target = join(root, 'packages', 'client', 'src', 'schema-types.generated.ts');
const generated = generate(readFileSync(join(root, 'schema.gql'), 'utf8'));
if (process.argv.includes('--check')) {
  if (readFileSync(target, 'utf8') !== generated) {
    console.error(
      'packages/client/src/schema-types.generated.ts is stale: run npm run client:types',
    );
    process.exit(1);
  }
} else {
  writeFileSync(target, generated);
}
