import { Injectable, OnModuleInit } from '@nestjs/common';
import { AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import { answerBodyFailuresOnExpress, ExpressAppLike } from './express-ingest';
import { acceptNdjsonOnFastify, answerBodyFailuresOnFastify } from './fastify-ingest';

/**
 * Makes POST /ingest behave the same in any host, on Express or Fastify, with nothing registered
 * by the host: NDJSON bodies reach the route, and bodies the HTTP server refuses before the route
 * runs are answered in the error envelope. What it adds to the host's server: Fastify's NDJSON
 * parser (only where the host has none), the route's own Fastify error handler, or on Express an
 * error middleware that answers for this route alone. Without an HTTP server (a CLI) it does
 * nothing.
 */
@Injectable()
export class IngestHttpSetup implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {
    // Fastify applies onRoute hooks as routes are added, which Nest does in app.init(), after
    // every provider is built: this is the last moment before it.
    const adapter = this.adapter();
    if (adapter?.getType() === 'fastify') answerBodyFailuresOnFastify(adapter.getInstance());
  }

  /** Nest has added the routes (Express can find ours) and the server has not started yet. */
  onModuleInit(): void {
    const adapter = this.adapter();
    const type = adapter?.getType();
    if (adapter && type === 'fastify') acceptNdjsonOnFastify(adapter.getInstance());
    if (adapter && type === 'express') {
      answerBodyFailuresOnExpress(adapter.getInstance<ExpressAppLike>());
    }
  }

  private adapter(): AbstractHttpAdapter | undefined {
    return this.adapterHost.httpAdapter as AbstractHttpAdapter | undefined;
  }
}
