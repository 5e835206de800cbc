import {
  Controller,
  Get,
  Inject,
  Logger,
  Param,
  Query,
  Res,
  StreamableFile,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { BoardExport, BoardExportService } from '../../export/board-export.service';
import {
  DEFAULT_EXPORT_STALL_MS,
  EXPORT_MEDIA_TYPES,
  exportStream,
} from '../../export/export-stream';
import type { LoyaltyModuleOptions } from '../../options/loyalty-module-options.interface';
import { LOYALTY_MODULE_OPTIONS } from '../../options/loyalty.module-definition';
import type { SpaceEntity } from '../../spaces/space.entity';
import type { DashboardSession } from './accounts/sessions.service';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { DashboardViews } from './dashboard-views.service';
import { param } from './form-fields';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { refusalOf } from './page-refusals';
import type { SafeHtml } from './views/html';
import { messagePage } from './views/team-pages';

/**
 * The board pages beside the space page: one address across the space's boards, and a board as
 * CSV. Both answer whoever sees the space (any role, or an operator), nobody else: a space the
 * account does not see is the same 404 page as one that does not exist.
 */
@Controller('dashboard')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(DashboardPageFilter)
@UseInterceptors(HtmlPageInterceptor)
export class BoardPagesController {
  private readonly stallMs: number;
  private readonly logger = new Logger('DashboardExport');

  constructor(
    private readonly views: DashboardViews,
    private readonly exports: BoardExportService,
    @Inject(LOYALTY_MODULE_OPTIONS) options: LoyaltyModuleOptions,
  ) {
    this.stallMs = options.boardExport?.stallTimeoutMs ?? DEFAULT_EXPORT_STALL_MS;
  }

  /** `?before=` or `?after=` a ledger position: a page of its ledger (see DashboardViews.address). */
  @Get('spaces/:id/addresses/:address')
  async address(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Param('address') address: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    return this.views.address(session, id, address, query);
  }

  /**
   * The address page of an address no path can name ('.' or '..': see isDotSegment), from
   * `?address=`; the page of any other, too.
   */
  @Get('spaces/:id/addresses')
  async addressInQuery(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SafeHtml> {
    return this.views.address(session, id, param(query.address) ?? '', query);
  }

  /**
   * The board (`?sprint=N`, else all-time) as CSV, streamed in rank order from one snapshot: the
   * export of GET /export, opened for the session. The session's access decides who may read the
   * space; the export is then opened as a reader of that space, which a private space admits.
   */
  @Get('spaces/:id/export.csv')
  async exportCsv(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Query('sprint') sprint: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StreamableFile> {
    const space = await this.views.pageSpace(session, id, 'space.read');
    const sprintId = this.sprintOf(session, space, sprint);
    let board: BoardExport;
    try {
      board = await this.exports.open(space.id, sprintId, { spaceId: space.id });
    } catch (error) {
      if (error instanceof LoyaltyException && error.code === ErrorCode.INVALID_SPRINT_ID)
        throw this.refused(session, space, 404, 'This space has no such sprint.');
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      if (error instanceof LoyaltyException && error.retryAfterSeconds !== undefined)
        void reply.header('retry-after', String(error.retryAfterSeconds));
      throw this.refused(session, space, refusal.status, `${refusal.message}.`);
    }
    const name = `space-${space.id}-${sprintId === null ? 'all-time' : `sprint-${sprintId}`}.csv`;
    void reply.headers({
      'cache-control': 'no-store',
      'x-board-entries': String(board.entries),
      'x-board-as-of': board.asOf.toISOString(),
    });
    return new StreamableFile(exportStream(board, 'csv', this.stallMs), {
      type: EXPORT_MEDIA_TYPES.csv,
      disposition: `attachment; filename="${name}"`,
    }).setErrorHandler((error) => {
      // Cut, never ended: a short file must not pass for the whole board.
      this.logger.error(`Export failed while streaming: ${error.message}`);
      reply.raw.destroy();
    });
  }

  /** `?sprint=`: absent or empty is the all-time board; anything but an id is refused. */
  private sprintOf(session: DashboardSession, space: SpaceEntity, sprint: unknown): number | null {
    if (sprint === undefined || sprint === '') return null;
    if (typeof sprint === 'string' && /^[1-9]\d{0,9}$/.test(sprint)) return Number(sprint);
    throw this.refused(
      session,
      space,
      400,
      'Choose a sprint of this space, or none for the all-time board.',
    );
  }

  private refused(
    session: DashboardSession,
    space: SpaceEntity,
    status: number,
    message: string,
  ): DashboardPageException {
    return new DashboardPageException(
      status,
      messagePage(session, {
        title: 'No export',
        message,
        active: 'spaces',
        back: { href: `/dashboard/spaces/${space.id}`, label: space.name },
      }),
    );
  }
}
