import { Injectable } from '@nestjs/common';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { toQuest } from '../../quests/quest.mapper';
import { QuestsService } from '../../quests/quests.service';
import { toSpace, toSprint } from '../../spaces/space.mapper';
import { SpacesService } from '../../spaces/spaces.service';
import { DashboardPageException } from './dashboard-page.exception';
import type { DashboardSession } from './accounts/sessions.service';
import { visibleTokens } from './accounts/token-access';
import type { SafeHtml } from './views/html';
import {
  settingsPage,
  SettingsView,
  SpaceListItem,
  spacePage,
  spacesPage,
  SpaceView,
  TokenOwnerChoice,
} from './views/pages';

/** What the space page may be told besides its query: a notice, a refused points form. */
export type SpaceExtras = Pick<SpaceView, 'notice' | 'points'>;

/** A space id as a page's path names it; NaN for anything else. */
export const pathSpaceId = (id: string) => (/^\d{1,10}$/.test(id) ? Number(id) : NaN);

const param = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The pages several routes answer (the settings page after a form, the space page after a refused
 * points form, the 404 of a space): built once here, from what the signed-in account may see.
 */
@Injectable()
export class DashboardViews {
  constructor(
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly leaderboards: LeaderboardsService,
    private readonly quests: QuestsService,
    private readonly profiles: ProfilesService,
  ) {}

  /** The settings page with the tokens the account manages and where it may create one. */
  async settings(
    session: DashboardSession,
    options: Omit<SettingsView, 'tokens' | 'spaceNames' | 'owners'> = {},
  ): Promise<SafeHtml> {
    const spaces = await this.spaces.listSpaces();
    const spaceNames = new Map(spaces.map((space) => [space.id, space.name]));
    const owners: TokenOwnerChoice[] = session.access.operator
      ? [{ value: 'deployment', label: 'Deployment (every space)' }]
      : [];
    for (const space of spaces) {
      if (session.access.can('space.manage', space.id))
        owners.push({ value: String(space.id), label: `${space.name} (#${space.id})` });
    }
    return settingsPage(session, {
      ...options,
      tokens: await visibleTokens(this.tokens, session),
      spaceNames,
      owners,
    });
  }

  /** The spaces the account sees, with its role in each. */
  async spaceList(session: DashboardSession): Promise<SpaceListItem[]> {
    return (await this.spaces.listSpaces())
      .filter((space) => session.access.sees(space.id))
      .map((space) => ({
        space: toSpace(space),
        isPrivate: space.isPrivate,
        role: session.access.roles.get(space.id),
      }));
  }

  async spacesPage(session: DashboardSession): Promise<SafeHtml> {
    return spacesPage(session, await this.spaceList(session));
  }

  /** The 404 of a space that does not exist, or that the account does not see: the same page. */
  async spaceNotFound(session: DashboardSession): Promise<DashboardPageException> {
    return new DashboardPageException(
      404,
      spacesPage(session, await this.spaceList(session), { error: 'Space not found.' }),
    );
  }

  /**
   * A space's page: its leaderboard as `query` asks (sprint, cursors, an address to find), its
   * quests, and the forms the account's role opens. Throws the 404 page for a space it does not
   * see; answers 400 with the page when the selection is refused.
   */
  async space(
    session: DashboardSession,
    id: string,
    query: Record<string, unknown>,
    extras: SpaceExtras = {},
  ): Promise<{ status: number; page: SafeHtml }> {
    const spaceId = pathSpaceId(id);
    const entity =
      Number.isSafeInteger(spaceId) && session.access.sees(spaceId)
        ? await this.spaces.findSpace(spaceId)
        : null;
    if (!entity) throw await this.spaceNotFound(session);
    const sprints = (await this.spaces.listSprints(entity.id)).map(toSprint);
    const sprint = param(query.sprint);
    const sprintId = sprint && /^\d{1,10}$/.test(sprint) ? Number(sprint) : null;
    const view: SpaceView = {
      ...extras,
      space: toSpace(entity),
      isPrivate: entity.isPrivate,
      role: session.access.roles.get(entity.id),
      manages: session.access.can('space.manage', entity.id),
      edits: session.access.can('space.edit', entity.id),
      sprints,
      sprintId,
      board: null,
      addresses: new Map(),
      quests: (await this.quests.listQuests(entity.id)).map(toQuest),
    };
    try {
      view.board = await this.leaderboards.getPage(
        entity.id,
        sprintId,
        { cursorAfter: param(query.after), cursorBefore: param(query.before) },
        // The page's profiles are loaded below, by address.
        { addresses: false },
      );
      const addresses = await this.profiles.loadAddresses(
        view.board.list.map((entry) => entry.addressKey),
      );
      view.addresses = new Map(addresses.map((address) => [address.id, address]));
      const address = (param(query.address) ?? '').trim();
      if (address) {
        const rank = await this.leaderboards.getAddressRank(entity.id, address, sprintId, {
          addresses: false,
        });
        view.search = { address, rank: rank ? { rank: rank.rank, points: rank.points } : null };
      }
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      view.error = `${error.message}. Showing nothing for this selection; start again from the first page.`;
    }
    const status = view.error || view.points ? 400 : 200;
    return { status, page: spacePage(session, view) };
  }
}
