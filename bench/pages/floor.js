// The framework floor of bench/pages.js: a bare NestJS + Apollo app on Fastify, in the versions
// the service is built with, serving the service's own schema (schema.gql, schema-first) and one
// page from memory: a `space` query resolver and a `loyaltyPointsRanks` field resolver that
// answer fixed objects captured from a real answer. No token check, rate limit, plugin, guard,
// filter, DataLoader or database: what NestJS and Apollo cost for this page, and nothing of ours.
// It runs in its own process, measured exactly as the service is.
// With `cacheControl: false`, Apollo's default cache-control plugin (which wraps every field) is
// off, as the service has it: the floor an app tuned like the service would have.
// IPC: { cmd: 'start', page, cacheControl? } -> { port }; { cmd: 'cpu' }; { cmd: 'close' }.
/* eslint-disable */
require('reflect-metadata');
const path = require('node:path');
const { serveParent } = require('./child');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { GraphQLModule, Resolver, Query, ResolveField, Args, Parent } = require('@nestjs/graphql');
const { ApolloDriver } = require('@nestjs/apollo');
const { ApolloServerPluginCacheControlDisabled } = require('@apollo/server/plugin/disabled');

let app;

/** Applies decorators as TypeScript would (`@Query('space') space(@Args('id') id)`). */
function method(target, name, decorators, parameters = []) {
  for (const [index, decorator] of parameters) decorator(target.prototype, name, index);
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
  for (const decorator of decorators) decorator(target.prototype, name, descriptor);
}

/** `cacheControl: false`: without Apollo's default cache-control plugin (the service turns it off). */
function floorModule(page, cacheControl) {
  const space = { id: '1', name: 'Bench', description: null };

  class QueryResolver {
    space(id) {
      return id === space.id || id === 1 ? space : null;
    }
  }
  method(QueryResolver, 'space', [Query('space')], [[0, Args('id')]]);
  Resolver('Query')(QueryResolver);

  class SpaceResolver {
    loyaltyPointsRanks(_space) {
      return page;
    }
  }
  method(
    SpaceResolver,
    'loyaltyPointsRanks',
    [ResolveField('loyaltyPointsRanks')],
    [[0, Parent()]],
  );
  Resolver('Space')(SpaceResolver);

  class FloorModule {}
  Module({
    imports: [
      GraphQLModule.forRoot({
        driver: ApolloDriver,
        path: '/query',
        typePaths: [path.join(__dirname, '../../schema.gql')],
        playground: false,
        plugins: cacheControl ? [] : [ApolloServerPluginCacheControlDisabled()],
      }),
    ],
    providers: [QueryResolver, SpaceResolver],
  })(FloorModule);
  return FloorModule;
}

const handlers = {
  /** `page`: the loyaltyPointsRanks object of a real answer, as the resolver's fixed result. */
  async start({ page, cacheControl = true }) {
    app = await NestFactory.create(floorModule(page, cacheControl), new FastifyAdapter(), {
      logger: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: app.getHttpServer().address().port };
  },
  async close() {
    await app?.close();
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers);
