import { utcInputStep, utcText } from '../forms/utc-form-time';
import { ACTIONS_COLUMN, dataTable, html, SafeHtml } from './html';
import { layout } from './layout';
import { QUEST_STATUS_LABELS, questEditHref } from './board-format';
import { alert, Signed } from './pages';

/** What every content form page is told besides its fields: a refusal and the field it is about. */
interface Refusal {
  error?: string;
  /** The form field (`name` attribute) the refusal is about: marked invalid, focused. */
  field?: string;
}

export interface SpaceFormView extends Refusal {
  /** The space being edited; absent on the new space form. */
  space?: { id: number; name: string };
  /** `alias` absent: shown empty (a form that does not carry it yet). */
  form: { id: string; name: string; description: string; alias?: string };
}

export interface SprintRow {
  id: number;
  name: string;
  startTime: number;
  endTime: number;
}

export interface SprintFormView extends Refusal {
  space: { id: number; name: string };
  /** The sprint being edited; absent on the new sprint form. */
  sprint?: { id: number; name: string };
  form: { id: string; name: string; start: string; end: string; allowOverlap: boolean };
  /** The space's sprints, to see their windows beside the form. */
  sprints: SprintRow[];
}

export interface QuestFormView extends Refusal {
  space: { id: number; name: string };
  /** The quest being edited; absent on the new quest form. */
  quest?: { id: string; name: string };
  form: {
    id: string;
    name: string;
    status: string;
    type: string;
    start: string;
    end: string;
    cap: string;
  };
}

const spaceHref = (id: number) => `/dashboard/spaces/${id}`;
const sprintEditHref = (spaceId: number, sprintId: number) =>
  `${spaceHref(spaceId)}/sprints/${sprintId}/edit`;

interface FieldOptions {
  /** The element id, unique on the page. */
  id: string;
  name: string;
  label: string;
  value: string;
  type?: string;
  required?: boolean;
  hint?: SafeHtml | string;
  /** Further attributes: written by this file only, never from input. */
  attributes?: SafeHtml;
}

const attribute = (yes: boolean, written: string) => (yes ? new SafeHtml(written) : '');

/** The refusal's message is read with the field it is about, then the field's hint. */
const FORM_ERROR_ID = 'form-error';
function describedBy(invalid: boolean, hintId: string | undefined): SafeHtml | '' {
  const ids = [invalid ? FORM_ERROR_ID : undefined, hintId].filter(Boolean).join(' ');
  return ids === '' ? '' : html`aria-describedby="${ids}"`;
}

/** One labelled input with its hint, marked invalid when the refusal is about it. */
function field(refusal: Refusal, options: FieldOptions): SafeHtml {
  const hintId = `${options.id}-hint`;
  const optional = options.required ? '' : html` <span class="optional">(optional)</span>`;
  return html`<div class="field">
    <label for="${options.id}">${options.label}${optional}</label>
    <input
      id="${options.id}"
      name="${options.name}"
      type="${options.type ?? 'text'}"
      value="${options.value}"
      ${attribute(options.required === true, 'required')}
      ${describedBy(refusal.field === options.name, options.hint ? hintId : undefined)}
      ${attribute(refusal.field === options.name, 'aria-invalid="true"')}
      ${options.attributes ?? ''}
    />
    ${options.hint ? html`<p id="${hintId}" class="hint">${options.hint}</p>` : ''}
  </div>`;
}

/** A date and time in UTC: what a datetime-local input holds, read as UTC by the server. */
function utcField(refusal: Refusal, options: Omit<FieldOptions, 'type' | 'attributes'>): SafeHtml {
  return field(refusal, {
    ...options,
    type: 'datetime-local',
    label: `${options.label} (UTC)`,
    attributes: html`step="${utcInputStep(options.value)}"`,
  });
}

/** The page around a content form: a way back, the heading, the refusal, the buttons. */
function formPage(
  session: Signed,
  options: {
    title: string;
    back: { href: string; label: string };
    action: string;
    submit: string;
    refusal: Refusal;
    fields: SafeHtml;
    after?: SafeHtml;
  },
): SafeHtml {
  return layout(
    { title: options.title, active: 'spaces', ...session },
    html`<p><a href="${options.back.href}">← ${options.back.label}</a></p>
      <h1>${options.title}</h1>
      <section class="card content-form">
        <div id="${FORM_ERROR_ID}">${alert(options.refusal.error)}</div>
        <form method="post" action="${options.action}">
          <input type="hidden" name="_csrf" value="${session.csrfToken}" />
          ${options.fields}
          <div class="row buttons">
            <button type="submit">${options.submit}</button>
            <a href="${options.back.href}">Cancel</a>
          </div>
        </form>
      </section>
      ${options.after ?? ''}`,
  );
}

/** An id that cannot change once made, shown where the new form has its input. */
const fixedId = (label: string, id: string | number) =>
  html`<dl class="summary fixed-id">
    <dt>${label}</dt>
    <dd><code>${id}</code> <span class="hint">(an id cannot change)</span></dd>
  </dl>`;

export function spaceFormPage(session: Signed, view: SpaceFormView): SafeHtml {
  const editing = view.space;
  const fields = html`${
    editing
      ? fixedId('Space id', editing.id)
      : field(view, {
          id: 'space-id',
          name: 'id',
          label: 'Space id',
          type: 'number',
          value: view.form.id,
          required: true,
          hint: 'A whole number: records and queries name the space by it. The next free one is proposed; it cannot change later.',
          attributes: html`min="1" max="2147483647" step="1" inputmode="numeric"`,
        })
  }
  ${field(view, {
    id: 'space-name',
    name: 'name',
    label: 'Name',
    value: view.form.name,
    required: true,
    hint: 'Up to 255 characters.',
    attributes: html`maxlength="255"`,
  })}
  ${field(view, {
    id: 'space-description',
    name: 'description',
    label: 'Description',
    value: view.form.description,
    hint: editing ? 'One line. Left empty, the description is removed.' : 'One line.',
    attributes: html`maxlength="10000"`,
  })}
  ${field(view, {
    id: 'space-alias',
    name: 'alias',
    label: 'Alias',
    value: view.form.alias ?? '',
    hint: `Up to 64 lower-case letters, digits and hyphens, such as my-space, unique among spaces: under the galxe schema profile, clients of Galxe's API find the space by it.${editing ? ' Left empty, the alias is removed.' : ''}`,
    attributes: html`maxlength="64" autocapitalize="none" autocomplete="off" spellcheck="false"`,
  })}`;
  return editing
    ? formPage(session, {
        title: `Edit space “${editing.name}”`,
        back: { href: spaceHref(editing.id), label: editing.name },
        action: `${spaceHref(editing.id)}/edit`,
        submit: 'Save space',
        refusal: view,
        fields,
      })
    : formPage(session, {
        title: 'New space',
        back: { href: '/dashboard/spaces', label: 'Spaces' },
        action: '/dashboard/spaces/new',
        submit: 'Create space',
        refusal: view,
        fields,
      });
}

export function sprintFormPage(session: Signed, view: SprintFormView): SafeHtml {
  const editing = view.sprint;
  const base = spaceHref(view.space.id);
  const fields = html`${
      editing
        ? fixedId('Sprint id', editing.id)
        : field(view, {
            id: 'sprint-id',
            name: 'id',
            label: 'Sprint id',
            type: 'number',
            value: view.form.id,
            required: true,
            hint: 'A whole number, shared by the sprints of every space: queries name the sprint by it. The next free one is proposed; it cannot change later.',
            attributes: html`min="1" max="2147483647" step="1" inputmode="numeric"`,
          })
    }
    ${field(view, {
      id: 'sprint-name',
      name: 'name',
      label: 'Name',
      value: view.form.name,
      required: true,
      hint: 'Up to 255 characters.',
      attributes: html`maxlength="255"`,
    })}
    ${utcField(view, {
      id: 'sprint-start',
      name: 'start',
      label: 'Start',
      value: view.form.start,
      required: true,
      hint: 'In UTC, not your local time: points events count for the sprint from this moment.',
    })}
    ${utcField(view, {
      id: 'sprint-end',
      name: 'end',
      label: 'End',
      value: view.form.end,
      required: true,
      hint: 'In UTC, after the start: events count up to, not including, this moment.',
    })}
    <div class="check">
      <input
        id="sprint-allow-overlap"
        name="allowOverlap"
        type="checkbox"
        value="on"
        aria-describedby="sprint-allow-overlap-hint"
        ${attribute(view.form.allowOverlap, 'checked')}
      />
      <label for="sprint-allow-overlap">Allow overlapping sprints</label>
      <span id="sprint-allow-overlap-hint" class="hint"
        >Without it, dates that overlap another sprint of this space are refused. With it, an event
        in the shared time counts for each of those sprints.</span
      >
    </div>`;
  const after = html`<section class="card" aria-labelledby="space-sprints-title">
    <h2 id="space-sprints-title">Sprints of ${view.space.name}</h2>
    ${
      view.sprints.length === 0
        ? html`<p class="empty">No sprints yet.</p>`
        : dataTable(
            'sprints',
            `Sprints of ${view.space.name}`,
            ['Sprint', 'Id', 'Start', 'End', ACTIONS_COLUMN],
            view.sprints.map(
              (sprint) =>
                html`<tr>
                  <td data-label="Sprint">${sprint.name}</td>
                  <td data-label="Id">${sprint.id}</td>
                  <td data-label="Start">${utcText(sprint.startTime)}</td>
                  <td data-label="End">${utcText(sprint.endTime)}</td>
                  <td class="actions">
                    ${
                      sprint.id === editing?.id
                        ? html`<span class="muted">Editing</span>`
                        : html`<a href="${sprintEditHref(view.space.id, sprint.id)}"
                            >Edit<span class="visually-hidden"> ${sprint.name}</span></a
                          >`
                    }
                  </td>
                </tr>`,
            ),
          )
    }
  </section>`;
  return editing
    ? formPage(session, {
        title: `Edit sprint “${editing.name}”`,
        back: { href: base, label: view.space.name },
        action: sprintEditHref(view.space.id, editing.id),
        submit: 'Save sprint',
        refusal: view,
        fields,
        after,
      })
    : formPage(session, {
        title: `New sprint in ${view.space.name}`,
        back: { href: base, label: view.space.name },
        action: `${base}/sprints/new`,
        submit: 'Create sprint',
        refusal: view,
        fields,
        after,
      });
}

export function questFormPage(session: Signed, view: QuestFormView): SafeHtml {
  const editing = view.quest;
  const base = spaceHref(view.space.id);
  const statuses = Object.entries(QUEST_STATUS_LABELS).map(
    ([status, label]) =>
      html`<option value="${status}" ${attribute(status === view.form.status, 'selected')}>
        ${label}
      </option>`,
  );
  const fields = html`${
      editing
        ? fixedId('Quest id', editing.id)
        : field(view, {
            id: 'quest-id',
            name: 'id',
            label: 'Quest id',
            value: view.form.id,
            required: true,
            hint: 'What your systems send in participation records, e.g. follow-on-x: up to 128 characters, no spaces at either end. Quest ids are shared by every space; it cannot change later.',
            attributes: html`maxlength="128" autocomplete="off" spellcheck="false"`,
          })
    }
    ${field(view, {
      id: 'quest-name',
      name: 'name',
      label: 'Name',
      value: view.form.name,
      required: true,
      hint: 'Up to 255 characters.',
      attributes: html`maxlength="255"`,
    })}
    <div class="field">
      <label for="quest-status">Status</label>
      <select
        id="quest-status"
        name="status"
        required
        ${describedBy(view.field === 'status', undefined)}
        ${attribute(view.field === 'status', 'aria-invalid="true"')}
      >
        ${statuses}
      </select>
    </div>
    ${field(view, {
      id: 'quest-type',
      name: 'type',
      label: 'Type',
      value: view.form.type,
      hint: 'Your own kind of quest, e.g. social or onchain: up to 64 characters.',
      attributes: html`maxlength="64"`,
    })}
    ${utcField(view, {
      id: 'quest-start',
      name: 'start',
      label: 'Start',
      value: view.form.start,
      hint: 'In UTC, not your local time. Empty: no start.',
    })}
    ${utcField(view, {
      id: 'quest-end',
      name: 'end',
      label: 'End',
      value: view.form.end,
      hint: 'In UTC, after the start. Empty: no end.',
    })}
    ${field(view, {
      id: 'quest-cap',
      name: 'cap',
      label: 'Cap',
      type: 'number',
      value: view.form.cap,
      hint: 'The most participants, a whole number. Empty: no cap.',
      attributes: html`min="0" max="2147483647" step="1" inputmode="numeric"`,
    })}`;
  return editing
    ? formPage(session, {
        title: `Edit quest “${editing.name}”`,
        back: { href: base, label: view.space.name },
        action: questEditHref(view.space.id, editing.id),
        submit: 'Save quest',
        refusal: view,
        fields,
      })
    : formPage(session, {
        title: `New quest in ${view.space.name}`,
        back: { href: base, label: view.space.name },
        action: `${base}/quests/new`,
        submit: 'Create quest',
        refusal: view,
        fields,
      });
}
