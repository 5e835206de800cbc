import { trace } from '@opentelemetry/api';
import { subscribe } from 'node:diagnostics_channel';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { hasSensitiveParam, maskedPath } from '../http/masked-path';
import { graphqlOperationOf } from './span-text';

/**
 * The host's QUERY_PATH (app.module.ts), which cannot be imported here: this module loads before
 * Nest and Fastify, so that the instrumentations are in place when they load. A spec keeps the two
 * equal.
 */
export const GRAPHQL_PATH = '/query';

type Hook = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
type HookSlot = 'onRequest' | 'preHandler';

/**
 * Names the HTTP server span of each request after its Fastify route (`POST /query`,
 * `GET /dashboard/teams/:id`) with `http.route`, and gives a GraphQL request's span its operation.
 * The HTTP instrumentation alone knows only the method. Each Fastify instance is reached through
 * the channel Fastify publishes on creation, so the app itself needs no tracing code; the hooks
 * are added per route as routes register, with the route's path in hand, instead of one app-wide
 * hook that looks the route up on every request.
 */
export function nameRouteSpans(): void {
  subscribe('fastify.initialization', (message) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onRoute', addRouteHooks);
  });
}

function addRouteHooks(route: RouteOptions): void {
  const path = route.url;
  if (path === undefined) return;
  const secretInPath = hasSensitiveParam(path);
  const naming: Hook = (request, _reply, done) => {
    // The server span is the active one here: Fastify runs onRequest within the request's event.
    const span = trace.getActiveSpan();
    span?.setAttribute('http.route', path).updateName(`${request.method} ${path}`);
    // The HTTP instrumentation recorded the path as sent: not a credential in it.
    if (secretInPath) span?.setAttribute('url.path', maskedPath(path, request.url, request.params));
    done();
  };
  append(route, 'onRequest', naming);
  const methods = [route.method].flat();
  if (path === GRAPHQL_PATH && methods.includes('POST')) append(route, 'preHandler', operation);
}

/** After the body is parsed: the operation's type and name, when the body says them. */
const operation: Hook = (request, _reply, done) => {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) {
    const { type, name } = graphqlOperationOf(request.body);
    if (type) span.setAttribute('graphql.operation.type', type);
    if (name) span.setAttribute('graphql.operation.name', name);
  }
  done();
};

/**
 * A route's hooks may be absent, one function or a list. Ours run first among the route's own, so a
 * route hook that answers early (the response cache) still leaves the span named.
 */
function append(route: RouteOptions, slot: HookSlot, hook: Hook): void {
  const slots = route as unknown as Record<HookSlot, unknown>;
  const existing = slots[slot];
  slots[slot] = [hook, ...(existing === undefined ? [] : [existing].flat())];
}
