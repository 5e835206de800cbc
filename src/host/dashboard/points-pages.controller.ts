import {
  Body,
  Controller,
  Get,
  Param,
  Post,
  Query,
  Redirect,
  Req,
  Res,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import type { SpaceEntity } from '../../spaces/space.entity';
import type { DashboardSession } from './accounts/sessions.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardAuth } from './dashboard-auth.service';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { DashboardViews } from './dashboard-views.service';
import { Form, param, SeeOther, seeOther, text } from './form-fields';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { setNotice } from './notices';
import { refusalOf } from './page-refusals';
import { parseFormKey, signedPoints } from './forms/points-form';
import { installUploadRoute } from './points-upload-route';
import type { PointsUploadEntity } from './points-upload.entity';
import { LINES_PAGE } from './forms/points-upload-parser';
import { PointsUploads, UploadProgress } from './points-uploads.service';
import { TeamActions } from './team-actions.service';
import type { SafeHtml } from './views/html';
import { notFoundPage } from './views/pages';
import {
  pointsUploadPage,
  pointsUploadsPage,
  uploadBusyPage,
  UploadsView,
  UploadView,
} from './points-upload-pages';
import type { PointsFormInput } from './views/points-views';

const uploadsPath = (spaceId: number) => `/dashboard/spaces/${spaceId}/points/uploads`;
/** A refused upload's text is shown again up to this size; a bigger one is a file to choose again. */
const MAX_ECHOED_CHARS = 256 * 1024;
/** Valid lines the preview shows. */
const FIRST_LINES = 10;

/** An upload over the limits: 413 Content Too Large, as a body over the server's limit is. */
const tooLarge = (error: unknown) =>
  error instanceof LoyaltyException && error.code === ErrorCode.REQUEST_TOO_LARGE;

/** A page number of a query string: 1 for anything else. */
const pageNumber = (value: unknown) => {
  const page = param(value);
  return page !== undefined && /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1;
};

/**
 * The points pages of a space, for its editors: grant or deduct points for one address, or upload
 * many (CSV or NDJSON), preview them line by line, and apply them.
 */
@Controller('dashboard')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(DashboardPageFilter)
@UseInterceptors(HtmlPageInterceptor)
export class PointsPagesController {
  constructor(
    private readonly team: TeamActions,
    private readonly views: DashboardViews,
    private readonly uploads: PointsUploads,
    auth: DashboardAuth,
    adapterHost: HttpAdapterHost,
  ) {
    // The uploads form carries a whole file: its route's body limit, and its session checked
    // before the body is read, set up before Nest adds the routes.
    const adapter = adapterHost.httpAdapter as AbstractHttpAdapter | undefined;
    if (adapter?.getType() === 'fastify')
      installUploadRoute(adapter.getInstance(), {
        sessionOf: (request) => auth.sessionOf(request),
        busyPage: uploadBusyPage,
        uploadRefusal: async (session, id) => {
          try {
            await views.pageSpace(session, id, 'space.edit');
            return null;
          } catch (error) {
            if (error instanceof DashboardPageException) return error;
            throw error;
          }
        },
      });
  }

  /** The form's key makes a resend of it change nothing (see newFormKey). */
  @Post('spaces/:id/points')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async adjustPoints(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const form = body ?? {};
    try {
      const points = signedPoints(form.direction, form.points);
      const once = parseFormKey(form.key, Date.now());
      const adjusted = await this.team.adjustPoints(
        session,
        space.id,
        { address: form.address, points, reason: form.reason },
        request.ip,
        once,
      );
      setNotice(request, reply, points > 0 ? 'points.granted' : 'points.deducted');
      // The space page then finds the address: its new points and rank show at once.
      const address = encodeURIComponent(adjusted.address);
      return seeOther(`/dashboard/spaces/${space.id}?address=${address}`);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      const input: PointsFormInput = {
        error: refusal.message,
        address: text(form.address),
        points: text(form.points),
        reason: text(form.reason),
        direction: text(form.direction),
      };
      const { page } = await this.views.space(session, id, {}, { points: input });
      throw new DashboardPageException(refusal.status, page);
    }
  }

  @Get('spaces/:id/points/uploads')
  async uploadsPage(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    return this.uploadsPageOf(session, space);
  }

  /** Reads and stores the lines, then shows them: nothing is applied yet. */
  @Post('spaces/:id/points/uploads')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async upload(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Body() body: Form | undefined,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const form = body ?? {};
    try {
      const uploadId = await this.uploads.create(session, space.id, form);
      return seeOther(`${uploadsPath(space.id)}/${uploadId}`);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      const content = text(form.content);
      const page = await this.uploadsPageOf(session, space, {
        error: refusal.message,
        form: {
          content: content.length <= MAX_ECHOED_CHARS ? content : '',
          reason: text(form.reason),
          name: text(form.name),
        },
      });
      throw new DashboardPageException(tooLarge(error) ? 413 : refusal.status, page);
    }
  }

  /** The preview of an upload, and after its apply, the outcome. */
  @Get('spaces/:id/points/uploads/:uploadId')
  async uploadPage(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Param('uploadId') uploadId: string,
    @Query('page') page: unknown,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const upload = await this.foundUpload(session, space, uploadId);
    return pointsUploadPage(session, await this.uploadView(space, upload, pageNumber(page)));
  }

  /** Where an apply is, for the page that follows it (any instance answers: it is stored). */
  @Get('spaces/:id/points/uploads/:uploadId/status')
  async uploadStatus(
    @CurrentSession() session: DashboardSession,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('uploadId') uploadId: string,
  ): Promise<UploadProgress> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const upload = await this.foundUpload(session, space, uploadId);
    void reply.header('cache-control', 'no-store');
    return this.uploads.progressOf(upload);
  }

  /**
   * Applies the upload's valid lines, then shows the outcome. Answered when it is done (the page
   * polls the status meanwhile); one already applied or being applied is shown as it is.
   */
  @Post('spaces/:id/points/uploads/:uploadId/apply')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async apply(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Param('uploadId') uploadId: string,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const upload = await this.foundUpload(session, space, uploadId);
    try {
      await this.uploads.apply(session, upload, request.ip);
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      // As the refusal left it (an upload found expired is marked so).
      const latest = (await this.uploads.find(space.id, upload.id)) ?? upload;
      const view = await this.uploadView(space, latest, 1);
      throw new DashboardPageException(
        refusal.status,
        pointsUploadPage(session, { ...view, error: refusal.message }),
      );
    }
    return seeOther(`${uploadsPath(space.id)}/${upload.id}`);
  }

  private async uploadsPageOf(
    session: DashboardSession,
    space: SpaceEntity,
    extras: Pick<UploadsView, 'error' | 'form'> = {},
  ): Promise<SafeHtml> {
    return pointsUploadsPage(session, {
      ...extras,
      space: { id: space.id, name: space.name },
      uploads: await this.uploads.recent(space.id),
    });
  }

  private async uploadView(
    space: SpaceEntity,
    upload: PointsUploadEntity,
    page: number,
  ): Promise<UploadView> {
    const lastPage = Math.max(1, Math.ceil(upload.errorCount / LINES_PAGE));
    const errorPage = Math.min(page, lastPage);
    return {
      space: { id: space.id, name: space.name },
      upload,
      progress: this.uploads.progressOf(upload),
      first: await this.uploads.firstLines(upload.id, FIRST_LINES),
      errors: await this.uploads.refusedLines(upload.id, 'error', errorPage),
      errorPage,
      refusals: await this.uploads.refusedLines(upload.id, 'refusal', 1),
    };
  }

  /** The space's upload of that id; the 404 page for any other. */
  private async foundUpload(
    session: DashboardSession,
    space: SpaceEntity,
    uploadId: string,
  ): Promise<PointsUploadEntity> {
    const upload = await this.uploads.find(space.id, uploadId);
    if (upload) return upload;
    throw new DashboardPageException(
      404,
      notFoundPage(session, 'There is no such points upload in this space.', {
        href: uploadsPath(space.id),
        label: 'Points uploads',
      }),
    );
  }
}
