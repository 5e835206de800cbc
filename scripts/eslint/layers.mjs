// A local ESLint plugin: which folders of src/ and packages/client/ may import which. Relative
// imports are resolved against the importing file, so `../../host/x` is caught however deep it
// starts.
import { dirname, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const rel = (file) => relative(root, file).split(sep).join('/');
const under = (path, folder) => folder === '' || path === folder || path.startsWith(`${folder}/`);

/**
 * The zones: a file in `from` (and not in `except`) may not import anything in `target` (unless
 * listed in `allow`, or in `allowInSpecs` for a *.spec.ts file); a `target` of '' is the whole
 * repository. With `builtinsOnly`, a file may import no package but Node's own (`node:`).
 */
const ZONES = [
  {
    from: 'src',
    except: ['src/host'],
    target: 'src/host',
    message:
      'Library code must not import the standalone host (src/host): the host composes the library, never the reverse.',
  },
  {
    from: 'src',
    target: 'packages/client',
    message:
      'The library and host must not import the API client (packages/client): it ships on its own.',
  },
  {
    from: 'packages/client/src',
    target: '',
    allow: ['packages/client/src'],
    // The spec that keeps the client's CSV byte-identical to the service's.
    allowInSpecs: ['src/common/csv.ts'],
    builtinsOnly: true,
    message:
      'The API client (packages/client) is a package of its own with no dependencies: it imports nothing outside packages/client/src, and no package but node: built-ins.',
  },
];

const noRestrictedPaths = {
  meta: {
    type: 'problem',
    docs: { description: 'Keeps the library, the host and the client package apart.' },
    schema: [],
  },
  create(context) {
    const file = rel(context.filename);
    const zones = ZONES.filter(
      (zone) => under(file, zone.from) && !(zone.except ?? []).some((e) => under(file, e)),
    );
    if (zones.length === 0) return {};
    const spec = file.endsWith('.spec.ts');
    const allowed = (target, list = []) =>
      list.some(
        (a) => under(target, a) || `${target}.ts` === a || target.replace(/\.js$/, '.ts') === a,
      );
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (!source.startsWith('.')) {
        for (const zone of zones) {
          if (zone.builtinsOnly && !spec && !source.startsWith('node:'))
            context.report({ node, message: `${zone.message} ('${source}')` });
        }
        return;
      }
      const target = rel(resolve(dirname(context.filename), source));
      for (const zone of zones) {
        if (!under(target, zone.target)) continue;
        if (allowed(target, zone.allow) || (spec && allowed(target, zone.allowInSpecs))) continue;
        context.report({ node, message: `${zone.message} ('${source}')` });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

export default { rules: { 'no-restricted-paths': noRestrictedPaths } };
