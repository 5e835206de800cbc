import { Injectable } from '@nestjs/common';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { addressKeyOf } from '../../common/address-key';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { BoardTotalsStore } from '../../leaderboards/ledger/board-totals.store';
import { PointsLedgerService } from '../../leaderboards/ledger/points-ledger.service';
import { ALL_TIME_SPRINT_ID } from '../../leaderboards/ranking/ranking';
import type { SqlDialect } from '../../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../../storage/dialect/sql-dialect.provider';
import { ReadReplicas } from '../../storage/replica/read-replicas';
import { ProfilesService } from '../../profiles/profiles.service';
import { toQuest } from '../../quests/quest.mapper';
import { QuestsService } from '../../quests/quests.service';
import { toSpace, toSprint } from '../../spaces/space.mapper';
import { SpacesService } from '../../spaces/spaces.service';
import { ErrorCode } from '../../common/errors/error-code';
import type { SpaceEntity } from '../../spaces/space.entity';
import { DashboardPageException } from './dashboard-page.exception';
import type { Permission } from './accounts/roles';
import { spaceFor } from './accounts/space-access';
import { messagePage } from './views/team-pages';
import type { DashboardSession } from './accounts/sessions.service';
import { visibleTokens } from './accounts/token-access';
import type { SafeHtml } from './views/html';
import {
  notFoundPage,
  settingsPage,
  SettingsView,
  SpaceListItem,
  spacesPage,
  TokenOwnerChoice,
} from './views/pages';
import { spacePage, SpaceView } from './views/space-page';
import { addressPage, AddressView } from './views/address-page';
import { BoardDistributions } from './board-distributions';
import {
  afterOffsetOf,
  BOARD_PAGE_SIZE,
  BoardSelection,
  boardSelection,
  pageCountOf,
  pageOfRank,
  pageOutOfRange,
  rankOutOfRange,
} from './board-selection';

/** What the space page may be told besides its query: a notice, a refused points form. */
export type SpaceExtras = Pick<SpaceView, 'notice' | 'points'>;

/** A space id as a page's path names it; NaN for anything else. */
export const pathSpaceId = (id: string) => (/^\d{1,10}$/.test(id) ? Number(id) : NaN);

const param = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** Board reads whose profiles the page loads itself, in one lookup by address. */
const NO_PROFILES = { addresses: false };
/** Bars of the space page's top entries chart. */
const TOP_ENTRIES = 10;
/** Ledger entries the address page lists, newest first. */
export const ADDRESS_EVENTS_LIMIT = 100;
/** What ingestion accepts as an address (records/ingest-record.ts). */
const ADDRESS_PATTERN = /^[\x21-\x7e]{1,128}$/;

/**
 * The pages several routes answer (the settings page after a form, the space page after a refused
 * points form, the 404 of a space): built once here, from what the signed-in account may see.
 */
@Injectable()
export class DashboardViews {
  /** The charts' points distributions, kept per board for a short while. */
  private readonly distributions: BoardDistributions;

  constructor(
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly leaderboards: LeaderboardsService,
    private readonly quests: QuestsService,
    private readonly profiles: ProfilesService,
    private readonly ledger: PointsLedgerService,
    replicas: ReadReplicas,
    totals: BoardTotalsStore,
    @InjectSqlDialect() dialect: SqlDialect,
  ) {
    this.distributions = new BoardDistributions(replicas, totals, dialect);
  }

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

  /**
   * The 404 of a space that does not exist, or that the account does not see: the same page, which
   * names no space. Async for the callers that await it.
   */
  spaceNotFound(session: DashboardSession): Promise<DashboardPageException> {
    return Promise.resolve(
      new DashboardPageException(404, notFoundPage(session, 'Space not found.')),
    );
  }

  /**
   * A space's page: the board page `query` selects (see BoardSelection: a page, a rank, an address
   * to find, each of a sprint's board or the all-time one), its charts, sprints and quests, and the
   * forms the account's role opens. Throws the 404 page for a space it does not see; answers 400
   * with the page when the selection is refused (the first page then shows under the message).
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
      await this.readBoard(view, boardSelection(query));
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      view.board = null;
      view.charts = undefined;
      view.error = `${error.message}. Showing nothing for this selection; start again from the first page.`;
    }
    const status = view.error || view.points ? 400 : 200;
    return { status, page: spacePage(session, view) };
  }

  /** Fills the view's board: the page the selection asks for, its profiles and its charts. */
  private async readBoard(
    view: SpaceView,
    selection: BoardSelection | { error: string },
  ): Promise<void> {
    const spaceId = view.space.spaceId;
    const sprintId = view.sprintId;
    let page = 1;
    let current: { rank: number } | { addressKey: string } | undefined;
    if ('error' in selection) view.error = selection.error;
    else if (selection.kind === 'address') {
      const found = await this.leaderboards.getAddressRank(
        spaceId,
        selection.address,
        sprintId,
        NO_PROFILES,
      );
      view.search = {
        address: selection.address,
        rank: found ? { rank: found.rank, points: found.points } : null,
      };
      page = found ? pageOfRank(found.rank) : selection.page;
      if (found) current = { addressKey: found.addressKey };
    } else if (selection.kind === 'rank') {
      view.jump = selection.rank;
      page = Math.max(1, pageOfRank(selection.rank));
      current = { rank: selection.rank };
    } else page = selection.page;
    let ranks = await this.boardPage(spaceId, sprintId, page);
    const refused =
      current && 'rank' in current
        ? rankOutOfRange(current.rank, ranks.totalCount)
        : pageOutOfRange(page, ranks.totalCount);
    if (refused) {
      view.error = refused;
      current = undefined;
      if (page !== 1) {
        page = 1;
        ranks = await this.boardPage(spaceId, sprintId, page);
      }
    }
    const entries = ranks.list;
    const wanted = current;
    const highlighted =
      wanted &&
      entries.find((e) =>
        'rank' in wanted ? e.rank === wanted.rank : e.addressKey === wanted.addressKey,
      );
    view.board = {
      entries,
      total: ranks.totalCount,
      page,
      pageCount: pageCountOf(ranks.totalCount),
      current: highlighted?.rank,
    };
    // Past the first page, the board has entries: its top ten are read apart.
    const top =
      page === 1
        ? entries.slice(0, TOP_ENTRIES)
        : (await this.leaderboards.getPage(spaceId, sprintId, { first: TOP_ENTRIES }, NO_PROFILES))
            .list;
    const keys = [...new Set([...entries, ...top].map((entry) => entry.addressKey))];
    const addresses = await this.profiles.loadAddresses(keys);
    view.addresses = new Map(addresses.map((address) => [address.id, address]));
    if (ranks.totalCount > 0) {
      const board = { spaceId, sprintId: sprintId ?? ALL_TIME_SPRINT_ID };
      view.charts = { distribution: await this.distributions.of(board), top, asOf: Date.now() };
    }
  }

  /** Page `page` (1-based) of a board, by rank offset: as cheap deep down as at the top. */
  private boardPage(spaceId: number, sprintId: number | null, page: number) {
    return this.leaderboards.getPage(
      spaceId,
      sprintId,
      { first: BOARD_PAGE_SIZE, after: afterOffsetOf(page) },
      // The page's profiles are loaded with the top entries', by address.
      NO_PROFILES,
    );
  }

  /**
   * One address in a space: its points and rank on the all-time board and on each sprint's, and
   * its newest ledger entries. A path that cannot be an address is the 404 page.
   */
  async address(session: DashboardSession, id: string, address: string): Promise<SafeHtml> {
    const space = await this.pageSpace(session, id, 'space.read');
    if (!ADDRESS_PATTERN.test(address))
      throw new DashboardPageException(
        404,
        messagePage(session, {
          title: 'Address not found',
          message:
            'That is not an address: addresses are 1 to 128 printable characters without spaces.',
          active: 'spaces',
          back: { href: `/dashboard/spaces/${space.id}`, label: space.name },
        }),
      );
    const sprints = (await this.spaces.listSprints(space.id)).map(toSprint);
    const boards: AddressView['boards'] = [];
    for (const sprint of [null, ...sprints]) {
      const sprintId = sprint?.id ?? null;
      const rank = await this.leaderboards.getAddressRank(space.id, address, sprintId, NO_PROFILES);
      boards.push({ sprint, standing: rank ? { rank: rank.rank, points: rank.points } : null });
    }
    const [profile] = await this.profiles.loadAddresses([addressKeyOf(address)]);
    const ledger = await this.ledger.addressEvents(space.id, address, {
      limit: ADDRESS_EVENTS_LIMIT,
    });
    return addressPage(session, {
      space: { id: space.id, name: space.name },
      // Without a profile row the lookup answers the lower-cased key: keep the spelling asked for.
      address: profile.address === profile.id ? address : profile.address,
      username: profile.username,
      boards,
      events: ledger.events,
      more: ledger.more,
      limit: ADDRESS_EVENTS_LIMIT,
    });
  }

  /**
   * The space a page's path names, when the account may act there with `permission`: a space it
   * does not see is the same 404 page as one that does not exist; one it sees without the
   * permission, a 403 page.
   */
  async pageSpace(
    session: DashboardSession,
    id: string,
    permission: Permission,
  ): Promise<SpaceEntity> {
    let spaceId: number;
    try {
      spaceId = await spaceFor(session, this.spaces, id, permission);
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      if (error.code !== ErrorCode.PERMISSION_DENIED) throw await this.spaceNotFound(session);
      throw new DashboardPageException(
        403,
        messagePage(session, {
          title: 'Not allowed',
          message: 'Your role in this space does not allow this.',
          active: 'spaces',
          back: { href: `/dashboard/spaces/${id}`, label: 'The space' },
        }),
      );
    }
    const space = await this.spaces.findSpace(spaceId);
    if (!space) throw await this.spaceNotFound(session);
    return space;
  }
}
