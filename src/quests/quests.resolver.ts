import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, ID, Query, Resolver } from '@nestjs/graphql';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { DeadlineGuard } from '../common/deadline/deadline.guard';
import { LoyaltyExceptionFilter } from '../common/errors/loyalty-exception.filter';
import { toQuest } from './quest.mapper';
import { Quest } from './quest.model';
import { QuestsService } from './quests.service';

@Resolver(() => Quest)
@UseGuards(DeadlineGuard, AccessTokenGuard)
@UseFilters(LoyaltyExceptionFilter)
export class QuestsResolver {
  constructor(private readonly quests: QuestsService) {}

  @Query(() => Quest, { nullable: true, description: 'A quest by id, Deleted ones included' })
  async quest(
    @Args('id', { type: () => ID }) id: string,
    @CurrentToken() token: AuthenticatedToken | null,
  ): Promise<Quest> {
    return toQuest(await this.quests.requireQuest(id, token));
  }
}
