import { GraphQLSchemaHost } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { createApp } from '../../app.factory';
import type { AppConfig } from '../../config/app-config';

/** The SDL the service serves (strict or not, as configured), sorted: what schema.gql holds. */
export async function printSchemaOf(config: AppConfig): Promise<string> {
  const app = await createApp(
    { ...config, database: { kind: 'sqlite', file: ':memory:' }, migrateOnStart: true },
    { logger: false },
  );
  try {
    return `${printSchema(lexicographicSortSchema(app.get(GraphQLSchemaHost).schema))}\n`;
  } finally {
    await app.close();
  }
}
