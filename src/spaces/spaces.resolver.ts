import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { requestOfContext } from '../common/graphql/request-of';
import { throwIfPastDeadline } from '../common/deadline/deadline';
import { DeadlineGuard } from '../common/deadline/deadline.guard';
import { LoyaltyExceptionFilter } from '../common/errors/loyalty-exception.filter';
import { ExtensionField } from '../common/graphql/extension-field.decorator';
import { toSpace, toSprint } from './space.mapper';
import { Space } from './space.model';
import { Sprint } from './sprint.model';
import { SpacesService } from './spaces.service';

@Resolver(() => Space)
@UseGuards(DeadlineGuard, AccessTokenGuard)
@UseFilters(LoyaltyExceptionFilter)
export class SpacesResolver {
  constructor(private readonly spaces: SpacesService) {}

  @Query(() => Space, {
    nullable: true,
    description: 'A space by id; `Space not found` when there is none',
  })
  async space(
    @Args('id', { type: () => Int }) id: number,
    @CurrentToken() token: AuthenticatedToken | null,
  ): Promise<Space> {
    // A private space another space's token asks for is not found, as one that does not exist.
    return toSpace(await this.spaces.requireSpace(id, token));
  }

  @ExtensionField()
  @ResolveField(() => [Sprint], { description: 'The sprints of the space, by start time' })
  async sprints(@Parent() space: Space, @Context() context: object): Promise<Sprint[]> {
    // Guards do not run on field resolvers (Nest's fieldResolverEnhancers): checked here.
    throwIfPastDeadline(requestOfContext(context));
    return (await this.spaces.listSprints(space.spaceId)).map(toSprint);
  }
}
