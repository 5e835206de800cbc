import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { DeadlineGuard } from '../common/deadline/deadline.guard';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { LoyaltyExceptionFilter } from '../common/errors/loyalty-exception.filter';
import { GalxeField } from '../common/graphql/extension-field.decorator';
import { MAX_INT_ID } from '../records/ingest-record';
import { toSpace } from '../spaces/space.mapper';
import { SpacesService } from '../spaces/spaces.service';
import { toCampaignConnection } from './campaign.mapper';
import { Campaign } from './campaigns/campaign.model';
import { CampaignConnection } from './campaigns/campaign-connection.model';
import { ListCampaignInput } from './campaigns/list-campaign.input';
import { QuestsService } from './quests.service';

/** The root `campaigns(input:)` of Galxe's API, and Campaign's times (galxe profile only). */
@Resolver(() => Campaign)
@UseGuards(DeadlineGuard, AccessTokenGuard)
@UseFilters(LoyaltyExceptionFilter)
export class CampaignsResolver {
  constructor(
    private readonly quests: QuestsService,
    private readonly spaces: SpacesService,
  ) {}

  /** One space's quests: `input.spaceId` names it, read by the rules of `space(id:)`. */
  @GalxeField()
  @Query(() => CampaignConnection, {
    name: 'campaigns',
    description: "A page of one space's quests (input.spaceId), as Galxe lists campaigns",
  })
  async rootCampaigns(
    @Args('input', { type: () => ListCampaignInput }) input: ListCampaignInput,
    @CurrentToken() token: AuthenticatedToken | null,
  ): Promise<CampaignConnection> {
    const space = toSpace(await this.spaces.requireSpace(spaceIdOf(input), token));
    return toCampaignConnection(await this.quests.campaignPage(space.spaceId, input), space);
  }

  @ResolveField('startTime', () => Int, {
    nullable: true,
    description: 'Unix seconds, as Galxe gives them; null: no start',
  })
  startTime(@Parent() campaign: Campaign): number | null {
    return unixSeconds(campaign.startMs, 'startTime', campaign.id);
  }

  @ResolveField('endTime', () => Int, {
    nullable: true,
    description: 'Unix seconds, as Galxe gives them; null: no end',
  })
  endTime(@Parent() campaign: Campaign): number | null {
    return unixSeconds(campaign.endMs, 'endTime', campaign.id);
  }
}

/** The root list's space: Galxe's `spaceId: ID` must name one of ours by its number. */
function spaceIdOf(input: ListCampaignInput): number {
  const raw = input.spaceId;
  if (raw === null || raw === undefined || raw === '')
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'campaigns needs input.spaceId: quests are listed one space at a time (or use space(id:) { campaigns(input:) })',
    );
  const id = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(id >= 1 && id <= MAX_INT_ID))
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `input.spaceId must be a space's number id, from 1 to ${MAX_INT_ID}`,
    );
  return id;
}

/** Seconds a GraphQL Int holds: 1901-12-13T20:45:52Z to 2038-01-19T03:14:07Z. */
const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

function unixSeconds(millis: number | null, field: string, questId: string): number | null {
  if (millis === null) return null;
  const seconds = Math.floor(millis / 1000);
  if (seconds < INT_MIN || seconds > INT_MAX)
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `${field} of quest ${questId} (${new Date(millis).toISOString()}) is past what an Int of Unix ` +
        'seconds holds (until 2038-01-19T03:14:07Z): read it as ISO 8601 through quest(id:)',
    );
  return seconds;
}
