import { Injectable } from '@nestjs/common';
import { addressKeyOf } from '../../common/address-key';
import type { SpaceReader } from '../../spaces/space-reader';
import { SpacesService } from '../../spaces/spaces.service';
import { ProfilesService } from '../../profiles/profiles.service';
import { BoardReader } from '../read/board-reader';
import { CursorService } from '../paging/cursor.service';
import { toLoyaltyPointsRank, toLoyaltyPointsRanks } from './leaderboard.mapper';
import type { LoyaltyPointsRank } from './loyalty-points-rank.model';
import type { LoyaltyPointsRanks } from './loyalty-points-ranks.model';
import { PagingArgs, toPageRequest } from '../paging/page-request';
import { ALL_TIME_SPRINT_ID, BoardRef } from '../ranking/ranking';

/** What a read loads besides the entries. */
export interface RankReadOptions {
  /**
   * Each rank's `address` (username, avatar), in one lookup for the page. Default true; our
   * resolvers pass whether the query selects it.
   */
  addresses?: boolean;
  /** The request the read serves: past its deadline, no profile is read (REQUEST_TIMEOUT). */
  request?: object;
}

@Injectable()
export class LeaderboardsService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly reader: BoardReader,
    private readonly cursors: CursorService,
    private readonly profiles: ProfilesService,
  ) {}

  /** A page of a space's board; the space is already known to exist. */
  async getPage(
    spaceId: number,
    sprintId: number | null | undefined,
    paging: PagingArgs,
    options: RankReadOptions = {},
  ): Promise<LoyaltyPointsRanks> {
    const board = await this.boardOf(spaceId, sprintId);
    const codec = await this.cursors.getCodec();
    const request = toPageRequest(paging, (cursor) => codec.decode(board, cursor));
    const page = toLoyaltyPointsRanks(board, await this.reader.readPage(board, request), codec);
    if (options.addresses ?? true) await this.attachAddresses(page.list, options.request);
    return page;
  }

  /**
   * The root-level variant: `Space not found` first (also for a private space `reader` may not
   * read; see SpacesService.requireSpace), then as {@link getPage}.
   */
  async getPageOfSpace(
    spaceId: number,
    sprintId: number | null | undefined,
    paging: PagingArgs,
    reader?: SpaceReader | null,
    options: RankReadOptions = {},
  ): Promise<LoyaltyPointsRanks> {
    await this.spaces.requireSpace(spaceId, reader);
    return this.getPage(spaceId, sprintId, paging, options);
  }

  /** One address's points and rank, or null when it is not on the board. */
  async getAddressRank(
    spaceId: number,
    address: string,
    sprintId: number | null | undefined,
    options: RankReadOptions = {},
  ): Promise<LoyaltyPointsRank | null> {
    const board = await this.boardOf(spaceId, sprintId);
    const entry = await this.reader.findEntry(board, addressKeyOf(address));
    if (!entry) return null;
    const rank = toLoyaltyPointsRank(board, entry);
    if (options.addresses ?? true) await this.attachAddresses([rank], options.request);
    return rank;
  }

  /** One profiles lookup for all of `ranks` (served from the page cache when it can). */
  private async attachAddresses(
    ranks: LoyaltyPointsRank[],
    request: object | undefined,
  ): Promise<void> {
    if (ranks.length === 0) return;
    const addresses = await this.profiles.addressesOfPage(
      request,
      ranks.map((rank) => rank.addressKey),
    );
    for (let i = 0; i < ranks.length; i++) ranks[i].address = addresses[i];
  }

  private async boardOf(spaceId: number, sprintId: number | null | undefined): Promise<BoardRef> {
    if (sprintId === null || sprintId === undefined)
      return { spaceId, sprintId: ALL_TIME_SPRINT_ID };
    await this.spaces.requireSprint(spaceId, sprintId);
    return { spaceId, sprintId };
  }
}
