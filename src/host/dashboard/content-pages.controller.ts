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
import type { FastifyReply, FastifyRequest } from 'fastify';
import { QuestStatus } from '../../records/quest-status.enum';
import type { SpaceEntity } from '../../spaces/space.entity';
import { SpacesService } from '../../spaces/spaces.service';
import type { DashboardSession } from './accounts/sessions.service';
import {
  ContentActions,
  ContentFormRefusal,
  QuestForm,
  SpaceForm,
  SprintForm,
} from './content-actions.service';
import { CsrfProtected } from './csrf-protected.decorator';
import { CsrfGuard } from './csrf.guard';
import { CurrentSession } from './current-session.decorator';
import { DashboardPageException } from './dashboard-page.exception';
import { DashboardPageFilter } from './dashboard-page.filter';
import { DashboardSessionGuard } from './dashboard-session.guard';
import { DashboardViews } from './dashboard-views.service';
import { HtmlPageInterceptor } from './html-page.interceptor';
import { NoticeCode, setNotice } from './notices';
import { refusalOf } from './page-refusals';
import { utcInputValue } from './forms/utc-form-time';
import {
  questFormPage,
  spaceFormPage,
  sprintFormPage,
  SprintFormView,
} from './views/content-pages';
import type { SafeHtml } from './views/html';
import { messagePage } from './views/team-pages';
import { Form as FormFields, SeeOther, seeOther, text } from './form-fields';

type Form = FormFields | undefined;

const optional = (value: number | string | null | undefined) =>
  value === null || value === undefined ? '' : String(value);
const utcValue = (ms: number | null) => (ms === null ? '' : utcInputValue(ms));

const spaceForm = (body: Form): SpaceForm => ({
  id: text(body?.id),
  name: text(body?.name),
  description: text(body?.description),
  // A form without the field (a script, a page from before it) keeps the alias as it is.
  alias: body?.alias === undefined ? undefined : text(body.alias),
});
const sprintForm = (body: Form): SprintForm => ({
  id: text(body?.id),
  name: text(body?.name),
  start: text(body?.start),
  end: text(body?.end),
  allowOverlap: text(body?.allowOverlap) !== '',
});
const questForm = (body: Form): QuestForm => ({
  id: text(body?.id),
  name: text(body?.name),
  status: text(body?.status),
  type: text(body?.type),
  start: text(body?.start),
  end: text(body?.end),
  cap: text(body?.cap),
});

/**
 * Creating and editing spaces (operators create them, owners edit them), sprints and quests
 * (editors and up) with forms that go through ingestion's checks (ContentActions). Post/Redirect/
 * Get: a saved form goes back to the space with a notice; a refused one is shown again with what
 * was typed and why, with the refusal's status, and nothing changed.
 *
 * Editing a space's name and description takes `space.manage`: they are the space itself, as its
 * privacy and members are, while its sprints and quests are the content editors keep up.
 */
@Controller('dashboard')
@UseGuards(DashboardSessionGuard, CsrfGuard)
@UseFilters(DashboardPageFilter)
@UseInterceptors(HtmlPageInterceptor)
export class ContentPagesController {
  constructor(
    private readonly actions: ContentActions,
    private readonly views: DashboardViews,
    private readonly spaces: SpacesService,
  ) {}

  @Get('spaces/new')
  async newSpace(@CurrentSession() session: DashboardSession): Promise<SafeHtml> {
    this.operatorOnly(session);
    const id = await this.actions.proposedSpaceId();
    return spaceFormPage(session, {
      form: { id: optional(id), name: '', description: '', alias: '' },
    });
  }

  @Post('spaces/new')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async createSpace(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: Form,
  ): Promise<SeeOther> {
    this.operatorOnly(session);
    const form = spaceForm(body);
    const id = await this.refusedAgain(
      () => this.actions.createSpace(session, form, request.ip),
      (refusal) => spaceFormPage(session, { form, ...refusal }),
    );
    return this.saved(request, reply, id, 'space.created');
  }

  @Get('spaces/:id/edit')
  async editSpace(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    return spaceFormPage(session, {
      space,
      form: {
        id: String(space.id),
        name: space.name,
        description: space.description ?? '',
        alias: space.alias ?? '',
      },
    });
  }

  @Post('spaces/:id/edit')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async updateSpace(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.manage');
    const form = { ...spaceForm(body), id: String(space.id) };
    await this.refusedAgain(
      () => this.actions.updateSpace(session, space, form, request.ip),
      (refusal) => spaceFormPage(session, { space, form, ...refusal }),
    );
    return this.saved(request, reply, space.id, 'space.updated');
  }

  @Get('spaces/:id/sprints/new')
  async newSprint(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const sprintId = await this.actions.proposedSprintId();
    return this.sprintPage(session, space, {
      form: { id: optional(sprintId), name: '', start: '', end: '', allowOverlap: false },
    });
  }

  @Post('spaces/:id/sprints/new')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async createSprint(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const form = sprintForm(body);
    await this.refusedAgain(
      () => this.actions.createSprint(session, space.id, form, request.ip),
      (refusal) => this.sprintPage(session, space, { form, ...refusal }),
    );
    return this.saved(request, reply, space.id, 'sprint.created');
  }

  @Get('spaces/:id/sprints/:sprintId/edit')
  async editSprint(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Param('sprintId') sprintId: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const sprint = await this.sprintOf(session, space, sprintId);
    // A sprint that overlaps another already was allowed to: saving its name keeps that choice.
    const overlapping = await this.spaces.overlappingSprints(
      space.id,
      sprint.startTime,
      sprint.endTime,
      sprint.id,
    );
    return this.sprintPage(session, space, {
      sprint,
      form: {
        id: String(sprint.id),
        name: sprint.name,
        start: utcInputValue(sprint.startTime),
        end: utcInputValue(sprint.endTime),
        allowOverlap: overlapping.length > 0,
      },
    });
  }

  @Post('spaces/:id/sprints/:sprintId/edit')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async updateSprint(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('sprintId') sprintId: string,
    @Body() body: Form,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const sprint = await this.sprintOf(session, space, sprintId);
    const form = { ...sprintForm(body), id: String(sprint.id) };
    await this.refusedAgain(
      () => this.actions.updateSprint(session, sprint, form, request.ip),
      (refusal) => this.sprintPage(session, space, { sprint, form, ...refusal }),
    );
    return this.saved(request, reply, space.id, 'sprint.updated');
  }

  @Get('spaces/:id/quests/new')
  async newQuest(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    return questFormPage(session, {
      space,
      form: {
        id: '',
        name: '',
        status: QuestStatus.Draft,
        type: '',
        start: '',
        end: '',
        cap: '',
      },
    });
  }

  @Post('spaces/:id/quests/new')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async createQuest(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: Form,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const form = questForm(body);
    await this.refusedAgain(
      () => this.actions.createQuest(session, space.id, form, request.ip),
      (refusal) => questFormPage(session, { space, form, ...refusal }),
    );
    return this.saved(request, reply, space.id, 'quest.created');
  }

  /** The edit page of a quest whose id is '.' or '..', which no browser keeps in a path. */
  @Get('spaces/:id/quests/edit')
  editQuestByQuery(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Query('quest') questId: unknown,
  ): Promise<SafeHtml> {
    return this.editQuest(session, id, text(questId));
  }

  @Post('spaces/:id/quests/edit')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  updateQuestByQuery(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Query('quest') questId: unknown,
    @Body() body: Form,
  ): Promise<SeeOther> {
    return this.updateQuest(session, request, reply, id, text(questId), body);
  }

  @Get('spaces/:id/quests/:questId/edit')
  async editQuest(
    @CurrentSession() session: DashboardSession,
    @Param('id') id: string,
    @Param('questId') questId: string,
  ): Promise<SafeHtml> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const quest = await this.questOf(session, space, questId);
    return questFormPage(session, {
      space,
      quest,
      form: {
        id: quest.id,
        name: quest.name,
        status: quest.status,
        type: quest.type ?? '',
        start: utcValue(quest.startTime),
        end: utcValue(quest.endTime),
        cap: optional(quest.cap),
      },
    });
  }

  @Post('spaces/:id/quests/:questId/edit')
  @CsrfProtected({ from: 'form' })
  @Redirect()
  async updateQuest(
    @CurrentSession() session: DashboardSession,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Param('questId') questId: string,
    @Body() body: Form,
  ): Promise<SeeOther> {
    const space = await this.views.pageSpace(session, id, 'space.edit');
    const quest = await this.questOf(session, space, questId);
    const form = { ...questForm(body), id: quest.id };
    await this.refusedAgain(
      () => this.actions.updateQuest(session, quest, form, request.ip),
      (refusal) => questFormPage(session, { space, quest, form, ...refusal }),
    );
    return this.saved(request, reply, space.id, 'quest.updated');
  }

  /** The way back to the space, with the notice it shows once. */
  private saved(
    request: FastifyRequest,
    reply: FastifyReply,
    spaceId: number,
    notice: NoticeCode,
  ): SeeOther {
    setNotice(request, reply, notice);
    return seeOther(`/dashboard/spaces/${spaceId}`);
  }

  /** Runs a change; its refusal is the form page again, with the refusal's status. */
  private async refusedAgain<T>(
    change: () => Promise<T>,
    page: (refusal: { error: string; field?: string }) => SafeHtml | Promise<SafeHtml>,
  ): Promise<T> {
    try {
      return await change();
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      const field = error instanceof ContentFormRefusal ? error.field : undefined;
      throw new DashboardPageException(
        refusal.status,
        await page({ error: refusal.message, field }),
      );
    }
  }

  private async sprintPage(
    session: DashboardSession,
    space: SpaceEntity,
    view: Omit<SprintFormView, 'space' | 'sprints'>,
  ): Promise<SafeHtml> {
    return sprintFormPage(session, {
      ...view,
      space,
      sprints: await this.spaces.listSprints(space.id),
    });
  }

  private async sprintOf(session: DashboardSession, space: SpaceEntity, sprintId: string) {
    const sprint = await this.actions.findSprint(space.id, sprintId);
    if (!sprint) throw this.notFound(session, space, 'Sprint not found');
    return sprint;
  }

  private async questOf(session: DashboardSession, space: SpaceEntity, questId: string) {
    const quest = await this.actions.findQuest(space.id, questId);
    if (!quest) throw this.notFound(session, space, 'Quest not found');
    return quest;
  }

  /** A sprint or quest that is not in this space (another space's is not told apart). */
  private notFound(session: DashboardSession, space: SpaceEntity, title: string) {
    return new DashboardPageException(
      404,
      messagePage(session, {
        title,
        message: `${title} in ${space.name}: it may have another id, or belong to another space.`,
        active: 'spaces',
        back: { href: `/dashboard/spaces/${space.id}`, label: space.name },
      }),
    );
  }

  /** A new space is the deployment's business: operators only. */
  private operatorOnly(session: DashboardSession): void {
    if (session.access.operator) return;
    throw new DashboardPageException(
      403,
      messagePage(session, {
        title: 'Not allowed',
        message: 'Only operators create spaces. Ask an operator of the deployment for a new space.',
        active: 'spaces',
      }),
    );
  }
}
