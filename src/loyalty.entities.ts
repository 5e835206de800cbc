import { AccessTokenEntity } from './auth/access-token.entity';
import { BoardEntryEntity } from './leaderboards/ledger/board-entry.entity';
import { BoardEntity } from './leaderboards/ledger/board.entity';
import { PointsEventEntity } from './leaderboards/ledger/points-event.entity';
import { ProfileEntity } from './profiles/profile.entity';
import { QuestParticipantEntity } from './quests/quest-participant.entity';
import { QuestEntity } from './quests/quest.entity';
import { SpaceEntity } from './spaces/space.entity';
import { SprintEntity } from './spaces/sprint.entity';
import { InitialSchema1763700000000 } from './storage/migrations/1763700000000-initial-schema';
import { TokenScopes1763900000000 } from './storage/migrations/1763900000000-token-scopes';
import { BoardChanges1764000000000 } from './storage/migrations/1764000000000-board-changes';
import { SqliteClusteredLedger1764100000000 } from './storage/migrations/1764100000000-sqlite-clustered-ledger';
import { SqliteLedgerDayIndex1764200000000 } from './storage/migrations/1764200000000-sqlite-ledger-day-index';
import { BoardBacklog1764300000000 } from './storage/migrations/1764300000000-board-backlog';
import { SpaceTokens1764400000000 } from './storage/migrations/1764400000000-space-tokens';
import { BoardRankBuckets1764500000000 } from './storage/migrations/1764500000000-board-rank-buckets';
import { LedgerReasons1764600000000 } from './storage/migrations/1764600000000-ledger-reasons';
import { SpaceAlias1764700000000 } from './storage/migrations/1764700000000-space-alias';
import { TokenCreators1764800000000 } from './storage/migrations/1764800000000-token-creators';
import { ServiceSettingEntity } from './storage/schema/service-setting.entity';

/** Every entity of the module: a host lists them in its TypeORM data source (or autoLoadEntities). */
export const LOYALTY_ENTITIES = [
  SpaceEntity,
  SprintEntity,
  ProfileEntity,
  QuestEntity,
  QuestParticipantEntity,
  PointsEventEntity,
  BoardEntryEntity,
  BoardEntity,
  AccessTokenEntity,
  ServiceSettingEntity,
];

/** The module's migrations, in order: a host adds them to its data source's `migrations`. */
export const LOYALTY_MIGRATIONS = [
  InitialSchema1763700000000,
  TokenScopes1763900000000,
  BoardChanges1764000000000,
  SqliteClusteredLedger1764100000000,
  SqliteLedgerDayIndex1764200000000,
  BoardBacklog1764300000000,
  SpaceTokens1764400000000,
  BoardRankBuckets1764500000000,
  LedgerReasons1764600000000,
  SpaceAlias1764700000000,
  TokenCreators1764800000000,
];
