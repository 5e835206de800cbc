import type { RouteOptions } from 'fastify';

interface KnownRoute {
  segments: string[];
  methods: Set<string>;
}

/**
 * The methods each route path answers, collected as Fastify adds routes (its onRoute hook), so a
 * request no route matched can be told 405 (the path has other methods) rather than 404.
 */
export class RouteTable {
  private readonly routes: KnownRoute[] = [];

  /** `hidden`: methods left out, as if no route had them (OPTIONS without CORS). */
  constructor(private readonly hidden: readonly string[] = []) {}

  /** For `fastify.addHook('onRoute', ...)`: must be added before the routes are. */
  readonly onRoute = (route: RouteOptions): void => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method])
      .map((method) => method.toUpperCase())
      .filter((method) => !this.hidden.includes(method));
    const segments = route.url.split('/');
    const known = this.routes.find((r) => r.segments.join('/') === segments.join('/'));
    if (known) methods.forEach((method) => known.methods.add(method));
    else this.routes.push({ segments, methods: new Set(methods) });
  };

  /** The methods some route answers at `path` (no query string), sorted; none when no route has it. */
  methodsAt(path: string): string[] {
    const segments = path.split('/').map(decodeSegment);
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (matches(route.segments, segments)) route.methods.forEach((method) => methods.add(method));
    }
    return [...methods].sort();
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Fastify's patterns as the host uses them: literal segments, `:param` segments and a `*` tail. */
function matches(pattern: string[], segments: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i];
    if (part === '*') return true;
    if (i >= segments.length) return false;
    if (part.includes(':')) {
      if (segments[i] === '') return false;
    } else if (part !== segments[i]) {
      return false;
    }
  }
  return pattern.length === segments.length;
}
