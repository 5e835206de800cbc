import type { FastifyInstance, RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preParsing' | 'onSend' | 'onResponse';

/**
 * Adds hooks to the routes of one path (and method, when given) as they are registered, instead
 * of app-wide hooks that compare the path on every request. So they must be added before the
 * route is registered (Nest registers routes in `app.init()`): a route registered earlier would
 * run without them, which is refused here.
 */
export function addRouteHooks(
  fastify: FastifyInstance,
  owner: string,
  target: { path: string; method?: string },
  hooks: Partial<Record<HookName, unknown>>,
): void {
  if (fastify.hasRoute({ method: target.method ?? 'POST', url: target.path })) {
    throw new Error(`${owner}: ${target.path} is already registered`);
  }
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (route.url !== target.path) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (target.method && !methods.includes(target.method)) return;
    const slots = route as unknown as Record<HookName, unknown>;
    for (const [name, hook] of Object.entries(hooks) as Array<[HookName, unknown]>) {
      const existing = slots[name];
      slots[name] = [...(existing === undefined ? [] : [existing].flat()), hook];
    }
  });
}
