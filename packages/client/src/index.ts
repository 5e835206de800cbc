// loyalty-leaderboard-client's entry point: a typed client for API consumers, no dependencies.
export { createClient, LoyaltyClient, CLIENT_DOCUMENTS } from './client.js';
export type {
  Address,
  BoardExport,
  CallOptions,
  ClientOptions,
  Entry,
  ExportOptions,
  ExportRow,
  FindRankOptions,
  FindRankResult,
  Page,
  Progress,
  Quest,
  RetryOptions,
  Space,
  WalkOptions,
} from './client.js';
export { LoyaltyApiError } from './errors.js';
export type { ClientErrorCode } from './errors.js';
export type * from './schema-types.generated.js';
