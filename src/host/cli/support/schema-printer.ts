import { IN_MEMORY_DATABASE_URL, parseDatabaseUrl } from '../../../storage/connection/database-url';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';
import type { AppConfig } from '../../config/app-config';
import { UsageError } from './cli-args';

/**
 * What the standalone service's app loads beyond the library's peers (packages/service/package.json
 * declares them all). A host that runs `loyalty schema` from its node_modules may lack them.
 */
export const SERVICE_ONLY_PACKAGES = [
  '@nestjs/apollo',
  '@apollo/server',
  '@nestjs/platform-fastify',
  'fastify',
  '@as-integrations/fastify',
  'ioredis',
] as const;

/** Whether `name` can be loaded from here (an ESM-only package that `require` cannot resolve counts). */
function installed(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'ERR_PACKAGE_PATH_NOT_EXPORTED';
  }
}

/**
 * The SDL the service serves under `config.schemaProfile`, sorted: what schema.gql (extended),
 * schema.spec.gql and schema.galxe.gql hold. It
 * boots the standalone service's app, so it loads that app's packages (Fastify, Apollo) only here:
 * the other commands run in hosts that have neither.
 */
export async function printSchemaOf(config: AppConfig): Promise<string> {
  const missing = SERVICE_ONLY_PACKAGES.filter((name) => !installed(name));
  if (missing.length > 0)
    throw new UsageError(
      `"schema" boots the standalone service, which needs ${missing.join(', ')}: npm install ${missing.join(' ')}`,
    );
  const { createApp } = await import('../../app.factory');
  const app = await createApp(
    { ...config, database: parseDatabaseUrl(IN_MEMORY_DATABASE_URL), migrateOnStart: true },
    { logger: false },
  );
  try {
    return `${printSchema(lexicographicSortSchema(app.get(GraphQLSchemaHost).schema))}\n`;
  } finally {
    await app.close();
  }
}
