import { Injectable } from '@nestjs/common';
import { addressKeyOf } from '../../common/address-key';
import type { BoardCsvRow } from '../../common/csv';
import { ProfilesService } from '../../profiles/profiles.service';
import type { SpaceReader } from '../../spaces/space-reader';
import { SpacesService } from '../../spaces/spaces.service';
import { BoardReader } from '../read/board-reader';
import { CursorService } from '../paging/cursor.service';
import { toLoyaltyPointsRank, toLoyaltyPointsRanks } from './leaderboard.mapper';
import type { LoyaltyPointsRank } from './loyalty-points-rank.model';
import type { LoyaltyPointsRanks } from './loyalty-points-ranks.model';
import { MAX_PAGE_SIZE, PageRequest, PagingArgs, toPageRequest } from '../paging/page-request';
import { ALL_TIME_SPRINT_ID, BoardRef } from '../ranking/ranking';

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

  /**
   * Every entry of a board in rank order, with its profile, read in keyset pages of `pageSize`
   * (the walk a client does through /query, without the HTTP round trips). `Space not found` and
   * `Invalid sprint ID` as on /query.
   */
  async *exportBoard(
    spaceId: number,
    sprintId: number | null | undefined,
    pageSize = MAX_PAGE_SIZE,
  ): AsyncGenerator<BoardCsvRow> {
    await this.spaces.requireSpace(spaceId);
    const board = await this.boardOf(spaceId, sprintId);
    let request: PageRequest = { kind: 'first', size: pageSize };
    for (;;) {
      const page = await this.reader.readPage(board, request);
      const addresses = await this.profiles.loadAddresses(page.entries.map((e) => e.addressKey));
      for (const [i, entry] of page.entries.entries()) {
        yield {
          rank: entry.rank,
          address: addresses[i].address,
          username: addresses[i].username ?? null,
          points: entry.points,
        };
      }
      if (!page.hasNextPage || page.entries.length === 0) return;
      request = { kind: 'after', key: page.entries[page.entries.length - 1], size: pageSize };
    }
  }

  private async boardOf(spaceId: number, sprintId: number | null | undefined): Promise<BoardRef> {
    if (sprintId === null || sprintId === undefined)
      return { spaceId, sprintId: ALL_TIME_SPRINT_ID };
    await this.spaces.requireSprint(spaceId, sprintId);
    return { spaceId, sprintId };
  }
}
