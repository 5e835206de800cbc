// A local ESLint plugin: which folders of src/ and packages/client/ may import which. Relative
// imports are resolved against the importing file, so `../../host/x` is caught however deep it
// starts.
import { dirname, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const rel = (file) => relative(root, file).split(sep).join('/');
const under = (path, folder) => folder === '' || path === folder || path.startsWith(`${folder}/`);

/** The database folders of storage/: only storage itself reaches into them. */
const DATABASE_FOLDERS = ['src/storage/sqlite', 'src/storage/mysql', 'src/storage/postgres'];
/** Database drivers: storage loads them, and the host's tracing instruments them. */
const DRIVER_PACKAGES = ['better-sqlite3', 'mysql2', 'pg'];
const DATABASE_SEAM =
  'Outside src/storage, code reaches a database through its seam (the dialect, storage/statements, snapshots, runners), never through a database folder or driver: a difference between databases is a method of the dialect or of a store chosen once.';

/**
 * The zones: a file in `from` (and not in `except`) may not import anything in `target` (unless
 * listed in `allow`, or in `allowInSpecs` for a *.spec.ts file); a `target` of '' is the whole
 * repository. With `builtinsOnly`, a file may import no package but Node's own (`node:`); with
 * `packages`, none of those packages (or their subpaths).
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
  ...DATABASE_FOLDERS.map((target) => ({
    from: 'src',
    except: ['src/storage'],
    target,
    allowInSpecs: [target],
    message: DATABASE_SEAM,
  })),
  {
    from: 'src',
    except: ['src/storage', 'src/host/tracing'],
    target: 'none',
    packages: DRIVER_PACKAGES,
    message: DATABASE_SEAM,
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
          const named = (zone.packages ?? []).some(
            (name) => source === name || source.startsWith(`${name}/`),
          );
          if (named && !spec) context.report({ node, message: `${zone.message} ('${source}')` });
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

/** The names of the databases and their drivers, as a string would spell them in code. */
const DATABASE_NAME = /^(sqlite|better-sqlite3|mysql|mysql2|mariadb|postgres|postgresql|pg)$/i;

/**
 * No database is named by a string outside src/storage (and the host's tracing, which names the
 * drivers it instruments): a branch on the database belongs in storage, behind the dialect. Specs
 * may name them.
 */
const noDatabaseNames = {
  meta: {
    type: 'problem',
    docs: { description: 'Keeps database names (and so branches on them) inside src/storage.' },
    schema: [],
  },
  create(context) {
    const file = rel(context.filename);
    if (!under(file, 'src') || file.endsWith('.spec.ts')) return {};
    if (under(file, 'src/storage') || under(file, 'src/host/tracing')) return {};
    const check = (node, value) => {
      if (typeof value === 'string' && DATABASE_NAME.test(value))
        context.report({
          node,
          message: `'${value}' names a database outside src/storage. ${DATABASE_SEAM}`,
        });
    };
    return {
      Literal: (node) => {
        // Module names are the import rule's.
        const parent = node.parent?.type;
        if (parent === 'ImportDeclaration' || parent === 'ImportExpression') return;
        check(node, node.value);
      },
      TemplateLiteral: (node) => {
        if (node.expressions.length === 0) check(node, node.quasis[0].value.cooked);
      },
    };
  },
};

export default {
  rules: { 'no-restricted-paths': noRestrictedPaths, 'no-database-names': noDatabaseNames },
};
