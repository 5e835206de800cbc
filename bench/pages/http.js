// Shared by bench/pages.js and its load generator: one keep-alive POST over node:http, and the
// request bodies of the page query.
/* eslint-disable */
const http = require('node:http');
const { performance } = require('node:perf_hooks');

// The page of bench/depth.js: cursor paging (`after`) or the deprecated offset (`skip`).
const PAGE_QUERY = `query($after: String, $skip: String) { space(id: 1) { loyaltyPointsRanks(cursorAfter: $after, after: $skip) {
  totalCount pageInfo { hasNextPage endCursor } list { rank points address { address username avatar } } } } }`;

/**
 * A body builder for one page. With `vary`, call n gets a different body text for the very same
 * page, so that no response cache keyed by the body can answer it:
 *   'comment'  appends the GraphQL comment `# <tag>-<n>` to the query text (the default; the query
 *              text is new each time, so the server also parses and validates it each time),
 *   'variable' adds an undeclared variable `_n` (ignored by GraphQL; the query text stays the same,
 *              so a parsed-document cache still hits).
 * Without `vary`, every call returns the same bytes.
 */
function pageBodies(variables, vary, tag = `${process.pid}.${Date.now()}`) {
  if (!vary) {
    const fixed = JSON.stringify({ query: PAGE_QUERY, variables });
    return () => fixed;
  }
  if (vary === 'variable') {
    return (n) =>
      JSON.stringify({ query: PAGE_QUERY, variables: { ...variables, _n: `${tag}-${n}` } });
  }
  return (n) => JSON.stringify({ query: `${PAGE_QUERY}\n# ${tag}-${n}`, variables });
}

/** Resolves { status, body (text), ms } of one POST, or rejects on a socket error. */
function post(agent, target, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(
      {
        agent,
        host: target.host,
        port: target.port,
        path: target.path,
        method: 'POST',
        headers: { ...target.headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Sorted-array percentile (nearest rank); NaN for no samples. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
}

module.exports = { PAGE_QUERY, pageBodies, post, percentile };
