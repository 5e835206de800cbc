// Stretch experiment of bench/pages.js (not part of the service): an Apollo plugin that answers
// an operation with graphql-jit's compiled query instead of Apollo's execution. Apollo still
// parses, validates and caches the document; the plugin compiles each operation text once (a
// bounded map) and runs it with the same context, so Nest's resolvers, guards and DataLoaders run
// as usual. Any answer with errors is dropped and Apollo executes the operation itself, so errors
// keep the service's envelope.
/* eslint-disable */
const { compileQuery, isCompiledQuery } = require('graphql-jit');
const { HeaderMap } = require('@apollo/server');

const LIMIT = 1000;

function compiledExecution() {
  const compiled = new Map();
  const stats = { compiled: 0, served: 0, fellBack: 0 };
  const plugin = {
    async requestDidStart() {
      return {
        async responseForOperation(ctx) {
          const key = `${ctx.operationName ?? ''}\n${ctx.source}`;
          let query = compiled.get(key);
          if (query === undefined) {
            const result = compileQuery(ctx.schema, ctx.document, ctx.operationName ?? undefined);
            query = isCompiledQuery(result) ? result : null;
            if (compiled.size >= LIMIT) compiled.delete(compiled.keys().next().value);
            compiled.set(key, query);
            stats.compiled++;
          }
          if (!query) return null;
          const result = await query.query(
            undefined,
            ctx.contextValue,
            ctx.request.variables ?? {},
          );
          if (result.errors?.length) {
            stats.fellBack++;
            return null;
          }
          stats.served++;
          return {
            http: { status: undefined, headers: new HeaderMap() },
            body: { kind: 'single', singleResult: result },
          };
        },
      };
    },
  };
  return { plugin, stats };
}

module.exports = { compiledExecution };
