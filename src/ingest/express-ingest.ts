import { ERROR_DEFINITIONS } from '../common/errors/error-code';
import { errorResponseBody } from '../common/errors/error-envelope';
import { IncomingRequestLike, requestIdOf } from '../common/graphql/request-of';
import { describeBodyFailure } from './ingest-body';
import { isIngestHandler } from './ingest-route';

/** What the module reads of an Express 5 application: its router's routes, and `use`. */
export interface ExpressAppLike {
  router?: {
    stack?: Array<{
      route?: {
        path?: unknown;
        methods?: Record<string, boolean | undefined>;
        stack?: Array<{ handle?: unknown }>;
      };
    }>;
  };
  use(handler: ExpressErrorMiddleware): unknown;
}

interface ExpressRequestLike extends IncomingRequestLike {
  method: string;
  path: string;
}

interface ExpressResponseLike {
  headersSent: boolean;
  status(code: number): { json(body: unknown): unknown };
}

type ExpressErrorMiddleware = (
  error: unknown,
  request: ExpressRequestLike,
  response: ExpressResponseLike,
  next: (error?: unknown) => void,
) => void;

/** Express matches paths case-insensitively and with or without a trailing slash. */
const normalized = (path: string) => path.toLowerCase().replace(/(.)\/+$/, '$1');

/** The status of an error of Express's body parsers (body-parser's HTTP errors), if it is one. */
function bodyFailureStatus(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const { status, type } = error as { status?: unknown; type?: unknown };
  return typeof type === 'string' && typeof status === 'number' && status >= 400 && status < 500
    ? status
    : undefined;
}

/**
 * Answers what Express's body parsers refuse for POST /ingest (malformed JSON, a body over the
 * JSON limit) in the error envelope: they fail before any route, so the controller's filter never
 * sees it. Runs once Nest has added the routes (to find ours, under whatever prefix) and before
 * Nest adds its own error handler, which then still answers everything else.
 */
export function answerBodyFailuresOnExpress(app: ExpressAppLike): void {
  const paths = new Set(
    (app.router?.stack ?? [])
      .map((layer) => layer.route)
      .filter(
        (route) => route?.methods?.post && route.stack?.some((l) => isIngestHandler(l.handle)),
      )
      .map((route) => normalized(String(route?.path))),
  );
  if (paths.size === 0) return;
  app.use((error, request, response, next) => {
    const status = bodyFailureStatus(error);
    if (
      status === undefined ||
      response.headersSent ||
      request.method !== 'POST' ||
      !paths.has(normalized(request.path))
    ) {
      next(error);
      return;
    }
    const limit = (error as { limit?: unknown }).limit;
    const { code, message } = describeBodyFailure(
      status,
      typeof limit === 'number' ? limit : undefined,
    );
    response
      .status(ERROR_DEFINITIONS[code].httpStatus)
      .json(errorResponseBody(code, message, requestIdOf(request)));
  });
}
