import { Args, Context, Parent, ResolveField, Resolver } from '@nestjs/graphql';
import { throwIfPastDeadline } from '../common/deadline/deadline';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { GalxeField } from '../common/graphql/extension-field.decorator';
import { requestOfContext } from '../common/graphql/request-of';
import { Space } from '../spaces/space.model';
import { toCampaignConnection } from './campaign.mapper';
import { CampaignConnection } from './campaigns/campaign-connection.model';
import { ListCampaignInput } from './campaigns/list-campaign.input';
import { QuestsService } from './quests.service';

/** Galxe's `Space.campaigns(input:)`: the space's quests as campaigns (galxe profile only). */
@Resolver(() => Space)
export class SpaceCampaignsResolver {
  constructor(private readonly quests: QuestsService) {}

  // The Space parent comes from space(...) or campaigns(...), which checked that the token may read it.
  @GalxeField()
  @ResolveField('campaigns', () => CampaignConnection, {
    description: "A page of the space's quests, as Galxe lists campaigns",
  })
  async campaigns(
    @Parent() space: Space,
    @Args('input', { type: () => ListCampaignInput }) input: ListCampaignInput,
    @Context() context: object,
  ): Promise<CampaignConnection> {
    // Guards do not run on field resolvers (Nest's fieldResolverEnhancers): checked here.
    throwIfPastDeadline(requestOfContext(context));
    if (isSet(input.spaceId) && input.spaceId !== space.id)
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `input.spaceId ${input.spaceId} is not this space (${space.id}): leave it out here`,
      );
    return toCampaignConnection(await this.quests.campaignPage(space.spaceId, input), space);
  }
}

const isSet = (value: string | null | undefined): value is string =>
  value !== null && value !== undefined && value !== '';
