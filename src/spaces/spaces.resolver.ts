import { UseFilters, UseGuards } from '@nestjs/common';
import { Args, Context, Int, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { AccessTokenGuard } from '../auth/access-token.guard';
import type { AuthenticatedToken } from '../auth/access-tokens.service';
import { CurrentToken } from '../auth/current-token.decorator';
import { requestOfContext } from '../common/graphql/request-of';
import { throwIfPastDeadline } from '../common/deadline/deadline';
import { DeadlineGuard } from '../common/deadline/deadline.guard';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
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

  /**
   * Declared as Galxe's `space(id: Int, alias: String)`; outside the galxe profile the schema has
   * `space(id: Int!)` (GALXE_ARGUMENTS), so there `id` is always given and `alias` never. Both
   * given must name one space (the alias is checked against the space of the id).
   */
  @Query(() => Space, {
    nullable: true,
    description: 'A space by id; `Space not found` when there is none',
  })
  async space(
    @Args('id', { type: () => Int, nullable: true }) id: number | null | undefined,
    @Args('alias', { type: () => String, nullable: true }) alias: string | null | undefined,
    @CurrentToken() token: AuthenticatedToken | null,
  ): Promise<Space> {
    const hasId = id !== null && id !== undefined;
    const hasAlias = alias !== null && alias !== undefined;
    // A private space another space's token asks for is not found, as one that does not exist.
    if (hasId) {
      const space = await this.spaces.requireSpace(id, token);
      // Galxe's clients send both for one space: answered when they agree (alias in any case).
      if (hasAlias && space.alias !== alias.toLowerCase())
        throw new LoyaltyException(
          ErrorCode.INVALID_ARGUMENT,
          `space(id: ${id}, alias: ${JSON.stringify(alias)}) names two spaces: space ${id}'s ` +
            `alias is ${space.alias === null ? 'not set' : JSON.stringify(space.alias)}; give id ` +
            'or alias, or both of one space',
        );
      return toSpace(space);
    }
    if (hasAlias) return toSpace(await this.spaces.requireSpaceByAlias(alias, token));
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Give space one of id or alias');
  }

  @ExtensionField()
  @ResolveField(() => [Sprint], { description: 'The sprints of the space, by start time' })
  async sprints(@Parent() space: Space, @Context() context: object): Promise<Sprint[]> {
    // Guards do not run on field resolvers (Nest's fieldResolverEnhancers): checked here.
    throwIfPastDeadline(requestOfContext(context));
    return (await this.spaces.listSprints(space.spaceId)).map(toSprint);
  }
}
