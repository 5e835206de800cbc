import { Injectable, Logger } from '@nestjs/common';
import { AdminsService } from './accounts/admins.service';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { addressKeyOf } from '../../common/address-key';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { LoyaltyPointsRank } from '../../leaderboards/graphql/loyalty-points-rank.model';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import {
  LedgerPosition,
  PointsLedgerService,
} from '../../leaderboards/ledger/points-ledger.service';
import { ALL_TIME_SPRINT_ID, BoardRef } from '../../leaderboards/ranking/ranking';
import { BoardReader } from '../../leaderboards/read/board-reader';
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
  TokenOwnerChoice,
} from './views/pages';
import { spacePage, SpaceView } from './views/space-page';
import {
  addressPage,
  AddressView,
  LEDGER_PAGE_SIZE,
  readLedgerPosition,
} from './views/address-page';
import { BoardDistributions } from './board-distributions';
import { param } from './form-fields';
import { settingsApiStatus } from './settings-api-error';
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
const pathSpaceId = (id: string) => (/^\d{1,10}$/.test(id) ? Number(id) : NaN);

/** Board reads whose profiles the page loads itself, in one lookup by address. */
const NO_PROFILES = { addresses: false };
/** Bars of the space page's top entries chart. */
const TOP_ENTRIES = 10;
/** What ingestion accepts as an address (records/ingest-record.ts). */
const ADDRESS_PATTERN = /^[\x21-\x7e]{1,128}$/;

/**
 * The pages several routes answer (the settings page after a form, the space page after a refused
 * points form, the 404 of a space): built once here, from what the signed-in account may see.
 */
@Injectable()
export class DashboardViews {
  private readonly logger = new Logger('DashboardViews');
  /** The charts' points distributions, kept per board for a short while. */
  private readonly distributions: BoardDistributions;

  constructor(
    private readonly tokens: AccessTokensService,
    private readonly spaces: SpacesService,
    private readonly leaderboards: LeaderboardsService,
    private readonly quests: QuestsService,
    private readonly profiles: ProfilesService,
    private readonly ledger: PointsLedgerService,
    private readonly boards: BoardReader,
    private readonly admins: AdminsService,
  ) {
    this.distributions = new BoardDistributions(boards);
  }

  /** The settings page with the tokens the account manages and where it may create one. */
  async settings(
    session: DashboardSession,
    options: Omit<SettingsView, 'tokens' | 'spaceNames' | 'owners' | 'creators'> = {},
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
    const tokens = await visibleTokens(this.tokens, session);
    const creators = new Map<string, string>();
    if (tokens.some((token) => token.createdBy !== null && token.createdBy !== 'cli'))
      for (const account of await this.admins.list()) creators.set(account.id, account.email);
    return settingsPage(session, { ...options, tokens, spaceNames, owners, creators });
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

  /**
   * The 404 of a space that does not exist, or that the account does not see: the same page, which
   * names no space.
   */
  spaceNotFound(session: DashboardSession): DashboardPageException {
    return new DashboardPageException(404, notFoundPage(session, 'Space not found.'));
  }

  /**
   * A space's page: the board page `query` selects (see BoardSelection: a page, a rank, an address
   * to find, each of a sprint's board or the all-time one), its charts, sprints and quests, and the
   * forms the account's role opens. Throws the 404 page for a space it does not see; answers 400
   * with the page when the selection is refused (the first page then shows under the message),
   * and the refusal's own status (503 and the like) when the board could not be read.
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
    if (!entity) throw this.spaceNotFound(session);
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
    let status = 200;
    try {
      await this.readBoard(view, boardSelection(query));
    } catch (error) {
      if (!(error instanceof LoyaltyException)) throw error;
      view.board = null;
      view.charts = undefined;
      if (error.extensions.category === 'VALIDATION') {
        view.error = `${error.message}. Showing nothing for this selection; start again from the first page.`;
      } else {
        // An outage or a deadline is no fault of the selection: its own status, and no blame.
        status = settingsApiStatus(error.code);
        view.error = `${error.message}: the leaderboard could not be read. Try again in a moment.`;
      }
    }
    if (status === 200 && (view.error || view.points)) status = 400;
    return { status, page: spacePage(session, view) };
  }

  /** Fills the view's board: the page the selection asks for, its profiles and its charts. */
  private async readBoard(
    view: SpaceView,
    selection: BoardSelection | { error: string },
  ): Promise<void> {
    const spaceId = view.space.spaceId;
    const sprintId = view.sprintId;
    // Before any read: a board is loaded into the rank index when first read, even an empty one.
    if (sprintId !== null && !view.sprints.some((sprint) => sprint.id === sprintId))
      throw new LoyaltyException(ErrorCode.INVALID_SPRINT_ID);
    const board: BoardRef = { spaceId, sprintId: sprintId ?? ALL_TIME_SPRINT_ID };
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
    // Off the board, refused before any page is read: page 10^14 would be an offset past any
    // cursor's. The first page is always there.
    if (page > 1 || (current && 'rank' in current)) {
      const total = await this.boards.countEntries(board);
      const refused =
        current && 'rank' in current
          ? rankOutOfRange(current.rank, total)
          : pageOutOfRange(page, total);
      if (refused) {
        view.error = refused;
        current = undefined;
        page = 1;
      }
    }
    const ranks = await this.boardPage(spaceId, sprintId, page);
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
    if (ranks.totalCount === 0) return;
    // Past the first page, the board's top ten are read apart.
    const [top, distribution] = await Promise.all([
      page === 1
        ? entries.slice(0, TOP_ENTRIES)
        : this.chart('top entries', board, () => this.topEntries(view)),
      this.chart('points distribution', board, () => this.distributions.of(board)),
    ]);
    const keys = [...new Set([...entries, ...(top ?? [])].map((entry) => entry.addressKey))];
    const addresses = await this.profiles.loadAddresses(keys);
    view.addresses = new Map(addresses.map((address) => [address.id, address]));
    view.charts = { distribution, top, asOf: Date.now() };
  }

  private async topEntries(view: SpaceView): Promise<LoyaltyPointsRank[]> {
    const { spaceId } = view.space;
    return (
      await this.leaderboards.getPage(spaceId, view.sprintId, { first: TOP_ENTRIES }, NO_PROFILES)
    ).list;
  }

  /**
   * A chart's numbers, or null when they could not be read: the charts are best effort, and a
   * failed one never takes the board with it.
   */
  private async chart<T>(what: string, board: BoardRef, read: () => Promise<T>): Promise<T | null> {
    try {
      return await read();
    } catch (error) {
      this.logger.warn(
        `The ${what} of board ${board.spaceId}/${board.sprintId} could not be read: ${(error as Error).message}`,
      );
      return null;
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
   * One address in a space: its points and rank on the all-time board and on each sprint's (its
   * entries on all of them read at once, a rank only where it has one), and a page of its ledger
   * entries: the newest, or those `?before=` or `?after=` a position (the pager's links). A path
   * that cannot be an address is the 404 page; a position that cannot be read, 400 with the
   * newest entries.
   */
  async address(
    session: DashboardSession,
    id: string,
    address: string,
    query: Record<string, unknown>,
  ): Promise<SafeHtml> {
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
    const key = addressKeyOf(address);
    const standings = await this.boards.findEntries(
      space.id,
      [ALL_TIME_SPRINT_ID, ...sprints.map((sprint) => sprint.id)],
      key,
    );
    const boards: AddressView['boards'] = [null, ...sprints].map((sprint) => {
      const entry = standings.get(sprint?.id ?? ALL_TIME_SPRINT_ID);
      return { sprint, standing: entry ? { rank: entry.rank, points: entry.points } : null };
    });
    const [profile] = await this.profiles.loadAddresses([key]);
    const { position, error } = ledgerPage(query);
    const ledger = await this.ledger.addressEvents(space.id, address, {
      limit: LEDGER_PAGE_SIZE,
      ...position,
    });
    const page = addressPage(session, {
      space: { id: space.id, name: space.name },
      // Without a profile row the lookup answers the lower-cased key: keep the spelling asked for.
      address: profile.address === profile.id ? address : profile.address,
      username: profile.username,
      boards,
      ledger: { ...ledger, paged: position.before !== undefined || position.after !== undefined },
      error,
    });
    if (error) throw new DashboardPageException(400, page);
    return page;
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
      if (error.code !== ErrorCode.PERMISSION_DENIED) throw this.spaceNotFound(session);
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
    if (!space) throw this.spaceNotFound(session);
    return space;
  }
}

/** The ledger page the address page's query asks for: `before=` or `after=` a position. */
function ledgerPage(query: Record<string, unknown>): {
  position: { before?: LedgerPosition; after?: LedgerPosition };
  error?: string;
} {
  const [before, after] = [param(query.before), param(query.after)];
  if (before === undefined && after === undefined) return { position: {} };
  const position = readLedgerPosition(before ?? after!);
  if (!position || (before !== undefined && after !== undefined))
    return {
      position: {},
      error: 'That link to a page of the ledger cannot be read. Showing the newest entries.',
    };
  return { position: before !== undefined ? { before: position } : { after: position } };
}
