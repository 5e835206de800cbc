// The public surface of the package: what a host application imports, and nothing else.
export { LoyaltyModule } from './loyalty.module';
export type {
  BoardExportOptions,
  LoyaltyModuleOptions,
  LoyaltyObserver,
  ReadReplicaOptions,
  SpaceWritten,
} from './options/loyalty-module-options.interface';
export { LOYALTY_MODULE_OPTIONS } from './options/loyalty.module-definition';
export { LOYALTY_ENTITIES, LOYALTY_MIGRATIONS } from './loyalty.entities';

export { AccessTokenGuard } from './auth/access-token.guard';
export { AccessTokensService, ACCESS_TOKEN_HEADER } from './auth/access-tokens.service';
export type {
  AccessTokenInfo,
  AuthenticatedToken,
  CreatedAccessToken,
  CreateTokenOptions,
  RotatedAccessToken,
  TokenBearingRequest,
  TokenListFilter,
} from './auth/access-tokens.service';
export {
  MAX_ROTATION_GRACE_SECONDS,
  MAX_TOKEN_LIFETIME_YEARS,
  parseRotationGrace,
  parseTokenExpiry,
} from './auth/token-expiry';
export { CurrentToken } from './auth/current-token.decorator';
export { Public } from './auth/public.decorator';
export { RequiresScope } from './auth/requires-scope.decorator';
export { DEFAULT_TOKEN_SCOPES, parseTokenScopes, TOKEN_SCOPES } from './auth/token-scopes';
export type { TokenScope } from './auth/token-scopes';

export { ErrorCode, ERROR_DEFINITIONS } from './common/errors/error-code';
export type { ErrorCategory } from './common/errors/error-code';
export { LoyaltyException } from './common/errors/loyalty.exception';
export { formatLoyaltyError } from './common/graphql/format-error';
export {
  ErrorEnvelopePlugin,
  type EnvelopeRequestListener,
  type EnvelopeResponseContext,
} from './common/graphql/error-envelope.plugin';
export {
  applySchemaProfile,
  GALXE_ARGUMENTS,
  SCHEMA_PROFILES,
  stripProductExtensions,
} from './common/graphql/schema-profile';
export type { SchemaProfile } from './common/graphql/schema-profile';
export { attachDeadline } from './common/deadline/deadline';

export { TransactionRunner } from './storage/transactions/transaction-runner';
export type { TransactionObserver } from './storage/transactions/transaction-runner';
export type { WriteLoadHint } from './storage/transactions/write-load';
export { BoardTotalsStore } from './leaderboards/ledger/board-totals.store';

export { SpacesService } from './spaces/spaces.service';
export { canReadSpace } from './spaces/space-reader';
export type { SpaceReader } from './spaces/space-reader';
export type { SpaceEntity } from './spaces/space.entity';
export { QuestsService } from './quests/quests.service';
export { ProfilesService } from './profiles/profiles.service';
export { LeaderboardsService } from './leaderboards/graphql/leaderboards.service';
export type { RankReadOptions } from './leaderboards/graphql/leaderboards.service';
export { BoardReader } from './leaderboards/read/board-reader';
export type { BoardPage, RankedEntry } from './leaderboards/read/board-reader';
export type { PageRequest } from './leaderboards/paging/page-request';
export type { BoardRef, RankKey } from './leaderboards/ranking/ranking';
export { BoardExportService } from './export/board-export.service';
export type { BoardExport } from './export/board-export.service';
export { BatchPartlyApplied, IngestService } from './ingest/ingest.service';
export type { IngestSummary } from './ingest/ingest.service';
export type { WriteScope } from './ingest/write-scope';
export type { IngestRecord } from './records/ingest-record';
export type { RecordOutcome } from './records/record-outcome';

export { Space } from './spaces/space.model';
export { Sprint } from './spaces/sprint.model';
export { Quest } from './quests/quest.model';
export { QuestStatus } from './records/quest-status.enum';
export { Address } from './profiles/address.model';
export { LoyaltyPointsRank } from './leaderboards/graphql/loyalty-points-rank.model';
export { LoyaltyPointsRanks } from './leaderboards/graphql/loyalty-points-ranks.model';
export { PageInfo } from './leaderboards/graphql/page-info.model';
