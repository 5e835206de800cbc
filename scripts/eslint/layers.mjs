// A local ESLint plugin: which folders of src/ may import which. Relative imports are resolved
// against the importing file, so `../../host/x` is caught however deep it starts.
import { dirname, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const rel = (file) => relative(root, file).split(sep).join('/');
const under = (path, folder) => path === folder || path.startsWith(`${folder}/`);

/**
 * The zones: a file in `from` (and not in `except`) may not import anything in `target`
 * (unless listed in `allow`).
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
    except: ['src/client'],
    target: 'src/client',
    message:
      'The library and host must not import the API client (src/client): it ships on its own.',
  },
  {
    from: 'src/client',
    target: 'src',
    allow: ['src/client', 'src/common/csv.ts'],
    message: 'The API client (src/client) imports nothing of the service: no Nest, no TypeORM.',
  },
];

const noRestrictedPaths = {
  meta: {
    type: 'problem',
    docs: { description: 'Keeps the library, the host and the client apart.' },
    schema: [],
  },
  create(context) {
    const file = rel(context.filename);
    const zones = ZONES.filter(
      (zone) => under(file, zone.from) && !(zone.except ?? []).some((e) => under(file, e)),
    );
    if (zones.length === 0) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = rel(resolve(dirname(context.filename), source));
      for (const zone of zones) {
        if (!under(target, zone.target)) continue;
        if ((zone.allow ?? []).some((a) => under(target, a) || `${target}.ts` === a)) continue;
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
