/** Route parameters whose values are credentials (an invitation's secret): never logged or traced. */
const SENSITIVE_PARAM = /secret|token|password|code/i;
const PARAM = /:([A-Za-z0-9_]+)/g;

/** Whether a route pattern (`/dashboard/invitations/:secret`) has a credential in its path. */
export function hasSensitiveParam(route: string | undefined): boolean {
  if (route === undefined || !route.includes(':')) return false;
  for (const [, name] of route.matchAll(PARAM)) if (SENSITIVE_PARAM.test(name)) return true;
  return false;
}

/**
 * A request's path for logs and traces: without its query string, and with the values of
 * credential parameters replaced by `***` (`/dashboard/invitations/***`).
 */
export function maskedPath(route: string | undefined, url: string, params: unknown): string {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (!hasSensitiveParam(route)) return path;
  const values = (params ?? {}) as Record<string, string | undefined>;
  return route!.replace(PARAM, (_, name: string) =>
    SENSITIVE_PARAM.test(name) ? '***' : encodeURIComponent(values[name] ?? ''),
  );
}
