#!/usr/bin/env node
// Fails when folders of src/ import each other in a cycle: every folder is a node, and a relative
// import from a file in folder A of a file in folder B (A != B) is an edge A -> B. Specs are left
// out: a unit spec may test a piece together with the layers above it.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', 'src');
const files = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (full.endsWith('.ts') && !full.endsWith('.spec.ts')) files.push(full);
  }
})(root);

const folderOf = (file) => path.relative(root, path.dirname(file)).split(path.sep).join('/') || '.';
const resolveImport = (from, spec) => {
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => fs.existsSync(candidate));
};

const edges = new Map();
const why = new Map();
for (const file of files) {
  const source = fs.readFileSync(file, 'utf8');
  for (const match of source.matchAll(
    /(?:from\s+|import\s*\(\s*|require\(\s*)'(\.{1,2}\/[^']*)'/g,
  )) {
    const target = resolveImport(file, match[1]);
    if (!target) continue;
    const [a, b] = [folderOf(file), folderOf(target)];
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a).add(b);
    why.set(`${a} -> ${b}`, `${path.relative(root, file)} imports ${match[1]}`);
  }
}

// Tarjan's strongly connected components: a component of more than one folder is a cycle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(node) {
  index.set(node, counter);
  low.set(node, counter++);
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node) ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
  }
  if (low.get(node) !== index.get(node)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== node);
  if (component.length > 1) cycles.push(component.sort());
}
for (const node of edges.keys()) if (!index.has(node)) visit(node);

if (cycles.length === 0) {
  console.log(
    `No import cycle between the ${new Set([...files.map(folderOf)]).size} folders of src/.`,
  );
  process.exit(0);
}
for (const cycle of cycles) {
  console.error(`Folders of src/ import each other in a cycle: ${cycle.join(', ')}`);
  for (const a of cycle)
    for (const b of cycle)
      if (why.has(`${a} -> ${b}`)) console.error(`  ${a} -> ${b}: ${why.get(`${a} -> ${b}`)}`);
}
process.exit(1);
