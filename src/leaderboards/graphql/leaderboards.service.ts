import { Injectable } from '@nestjs/common';
import { addressKeyOf } from '../../common/address-key';
import type { SpaceReader } from '../../spaces/space-reader';
import { SpacesService } from '../../spaces/spaces.service';
import { BoardReader } from '../read/board-reader';
import { CursorService } from '../paging/cursor.service';
import { toLoyaltyPointsRank, toLoyaltyPointsRanks } from './leaderboard.mapper';
import type { LoyaltyPointsRank } from './loyalty-points-rank.model';
import type { LoyaltyPointsRanks } from './loyalty-points-ranks.model';
import { PagingArgs, toPageRequest } from '../paging/page-request';
import { ALL_TIME_SPRINT_ID, BoardRef } from '../ranking/ranking';

@Injectable()
export class LeaderboardsService {
  constructor(
    private readonly spaces: SpacesService,
    private readonly reader: BoardReader,
    private readonly cursors: CursorService,
  ) {}

  /** A page of a space's board; the space is already known to exist. */
  async getPage(
    spaceId: number,
    sprintId: number | null | undefined,
    paging: PagingArgs,
  ): Promise<LoyaltyPointsRanks> {
    const board = await this.boardOf(spaceId, sprintId);
    const codec = await this.cursors.getCodec();
    const request = toPageRequest(paging, (cursor) => codec.decode(board, cursor));
    const page = await this.reader.readPage(board, request);
    return toLoyaltyPointsRanks(board, page, codec);
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
  ): Promise<LoyaltyPointsRanks> {
    await this.spaces.requireSpace(spaceId, reader);
    return this.getPage(spaceId, sprintId, paging);
  }

  /** One address's points and rank, or null when it is not on the board. */
  async getAddressRank(
    spaceId: number,
    address: string,
    sprintId: number | null | undefined,
  ): Promise<LoyaltyPointsRank | null> {
    const board = await this.boardOf(spaceId, sprintId);
    const entry = await this.reader.findEntry(board, addressKeyOf(address));
    return entry ? toLoyaltyPointsRank(board, entry) : null;
  }

  private async boardOf(spaceId: number, sprintId: number | null | undefined): Promise<BoardRef> {
    if (sprintId === null || sprintId === undefined)
      return { spaceId, sprintId: ALL_TIME_SPRINT_ID };
    await this.spaces.requireSprint(spaceId, sprintId);
    return { spaceId, sprintId };
  }
}
