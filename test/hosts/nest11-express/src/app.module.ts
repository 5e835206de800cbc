// The host's application module: the README's module snippet, pasted verbatim between the
// markers below (scripts/test-hosts.js checks it against README.md), after the imports that the
// snippet leaves to the host.
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { TypeOrmModule } from '@nestjs/typeorm';

// >>> README.md "Using it as a NestJS module"
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import {
  ErrorEnvelopePlugin,
  formatLoyaltyError,
  LOYALTY_MIGRATIONS,
  LoyaltyModule,
} from 'loyalty-leaderboard';

// DATABASE_URL, as the loyalty command line reads it (same default): sqlite:file,
// mysql://user:password@host:3306/database (MySQL 8.0.17+, MariaDB 10.8+)
// or postgres://user:password@host:5432/database (PostgreSQL 13+)
const db = process.env.DATABASE_URL || 'sqlite:./data/loyalty.sqlite';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      ...(db.startsWith('sqlite:')
        ? { type: 'better-sqlite3', database: db.slice('sqlite:'.length), enableWAL: true }
        : db.startsWith('postgres')
          ? { type: 'postgres', url: db }
          : { type: 'mysql', url: db, timezone: 'Z' }), // 'mysql' serves MariaDB too
      autoLoadEntities: true,
      migrations: LOYALTY_MIGRATIONS, // the schema comes from these, not from synchronize
    }),
    GraphQLModule.forRoot<ApolloDriverConfig>({
      driver: ApolloDriver,
      path: '/query', // the path this README and the client use; Nest's default is /graphql
      autoSchemaFile: true,
      // Optional: the error envelope, and the HTTP statuses it implies.
      formatError: formatLoyaltyError,
      plugins: [new ErrorEnvelopePlugin(), ApolloServerPluginCacheControlDisabled()],
      preserveHttpStatusForExecutionErrors: false,
    }),
    // migrationsRun: at start, under a lock, so replicas started together migrate once
    LoyaltyModule.forRoot({ cursorSecret: process.env.CURSOR_SECRET, migrationsRun: true }),
  ],
})
export class AppModule {}
// <<< README.md
