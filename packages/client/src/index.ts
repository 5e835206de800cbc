// The `client` entry point: a typed client for API consumers, free of NestJS and TypeORM.
export { createClient, LoyaltyClient, CLIENT_DOCUMENTS } from './client';
export type {
  Address,
  CallOptions,
  ClientOptions,
  Entry,
  FindRankOptions,
  FindRankResult,
  Page,
  Progress,
  Quest,
  RetryOptions,
  Space,
  WalkOptions,
} from './client';
export { LoyaltyApiError } from './errors';
export type { ClientErrorCode } from './errors';
export type * from './schema-types.generated';
