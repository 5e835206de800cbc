import type { PointsUploadLineEntity } from './points-upload-line.entity';
import type { PointsUploadEntity } from './points-upload.entity';
import type { ListedLine, UploadProgress } from './points-uploads.service';
import {
  KEPT_UPLOADS,
  LINES_PAGE,
  MAX_UPLOAD_BYTES,
  MAX_UPLOAD_LINES,
  validLines,
} from './forms/points-upload-parser';
import type { UploadBusy } from './points-upload-route';
import { dataTable, formatNumber as n, formatTime, html, SafeHtml, timeTag } from './views/html';
import { layout } from './views/layout';
import { alert, Signed } from './views/pages';

interface SpaceRef {
  id: number;
  name: string;
}

/** The uploads page: the form, and the space's recent uploads. */
export interface UploadsView {
  space: SpaceRef;
  uploads: PointsUploadEntity[];
  error?: string;
  /** What a refused form held (its text only when it is small enough to show again). */
  form?: { content: string; reason: string; name: string };
}

/** One upload: its preview before the apply, its outcome after. */
export interface UploadView {
  space: SpaceRef;
  upload: PointsUploadEntity;
  progress: UploadProgress;
  /** The first valid lines. */
  first: PointsUploadLineEntity[];
  /** A page of the lines refused when the file was read. */
  errors: ListedLine[];
  errorPage: number;
  /** The first lines refused at the apply. */
  refusals: ListedLine[];
  error?: string;
}

const uploadsPath = (space: SpaceRef) => `/dashboard/spaces/${space.id}/points/uploads`;
const iso = (ms: number) => new Date(ms).toISOString();
const plural = (count: number, one: string, many = `${one}s`) =>
  `${n(count)} ${count === 1 ? one : many}`;

/** Where an upload is, in a word for the list and the page. */
export function uploadState(upload: PointsUploadEntity): string {
  if (upload.status === 'applied') return 'Applied';
  if (upload.expiredAt !== null) return 'Expired';
  if (upload.status === 'applying') return 'Being applied';
  if (upload.status === 'stopped') return 'Stopped';
  return 'Not applied';
}

/** The outcome of an apply, as the page and the audit trail say it. */
export function applyResult(progress: UploadProgress): string {
  return `${n(progress.applied)} applied, ${n(progress.unchanged)} already applied, ${n(progress.refused)} refused.`;
}

function breadcrumbs(space: SpaceRef, upload?: boolean): SafeHtml {
  return html`<p class="crumbs">
    <a href="/dashboard/spaces/${space.id}">← ${space.name}</a>
    ${upload ? html` · <a href="${uploadsPath(space)}">Points uploads</a>` : ''}
  </p>`;
}

export function pointsUploadsPage(session: Signed, view: UploadsView): SafeHtml {
  const form = view.form;
  const rows = view.uploads.map(
    (upload) =>
      html`<tr>
        <td data-label="Uploaded">${timeTag(iso(upload.createdAt))}</td>
        <td data-label="Name">
          <a href="${uploadsPath(view.space)}/${upload.id}" class="upload-name">${upload.name}</a>
        </td>
        <td data-label="Lines" class="num">${n(upload.lineCount)}</td>
        <td data-label="Valid" class="num">${n(validLines(upload))}</td>
        <td data-label="Status">${uploadState(upload)}</td>
      </tr>`,
  );
  return layout(
    { title: `Points uploads · ${view.space.name}`, active: 'spaces', ...session },
    html`${breadcrumbs(view.space)}
      <h1>Points uploads</h1>
      <section class="card" aria-labelledby="upload-title">
        <h2 id="upload-title">Grant or deduct for many addresses</h2>
        <p>
          Paste lines or choose a file: you will see every line checked before anything is applied.
          Applying the same file again changes nothing.
        </p>
        <div id="upload-error">${alert(view.error)}</div>
        <form
          method="post"
          action="${uploadsPath(view.space)}"
          class="points-upload"
          data-points-upload
          data-max-bytes="${MAX_UPLOAD_BYTES}"
        >
          <input type="hidden" name="_csrf" value="${session.csrfToken}" />
          <input type="hidden" name="name" value="${form?.name ?? ''}" data-upload-name />
          <div class="upload-file" data-upload-file hidden>
            <label for="points-file">File</label>
            <input
              id="points-file"
              type="file"
              accept=".csv,.ndjson,.jsonl,.txt,text/csv,application/x-ndjson"
              aria-describedby="points-file-hint"
            />
            <p class="hint" id="points-file-hint">
              CSV or NDJSON, at most 10 MB and ${n(MAX_UPLOAD_LINES)} lines. A chosen file is sent
              instead of the lines below.
            </p>
          </div>
          <label for="points-content">Lines</label>
          <textarea
            id="points-content"
            name="content"
            rows="8"
            spellcheck="false"
            aria-describedby="points-content-hint"
          >
${form?.content ?? ''}</textarea>
          <div class="hint" id="points-content-hint">
            <p>
              CSV with a header line naming its columns: <code>address</code> and
              <code>points</code>, optionally <code>reason</code> and <code>occurredAt</code> (an
              ISO 8601 time such as <code>2026-01-31T12:00:00Z</code>; without one, the points count
              from when the upload is applied). Negative points deduct. Or NDJSON: one JSON object a
              line with the same fields.
            </p>
            <pre class="sample">
address,points,reason
0xA11CE,25,Community call host
0xB0B,-5,Duplicate claim</pre>
          </div>
          <label for="points-batch-reason">Reason for lines without one</label>
          <input
            id="points-batch-reason"
            name="reason"
            type="text"
            maxlength="200"
            aria-describedby="points-batch-reason-hint"
            value="${form?.reason ?? ''}"
          />
          <p class="hint" id="points-batch-reason-hint">
            Every line needs a reason: its own, or this one.
          </p>
          <div class="upload-progress" data-upload-progress hidden>
            <label for="points-upload-progress">Uploading</label>
            <progress id="points-upload-progress" max="100"></progress>
            <span class="hint" data-progress-text aria-live="polite"></span>
          </div>
          <button type="submit">Check the lines</button>
        </form>
      </section>
      <section class="card" aria-labelledby="recent-title">
        <h2 id="recent-title">Recent uploads</h2>
        ${
          rows.length === 0
            ? html`<p class="empty">No uploads yet.</p>`
            : dataTable(
                'uploads',
                'Recent points uploads',
                [
                  'Uploaded',
                  'Name',
                  { label: 'Lines', num: true },
                  { label: 'Valid', num: true },
                  'Status',
                ],
                rows,
              )
        }
        <p class="hint">
          The lines of the ${KEPT_UPLOADS} newest uploads are kept for a week, to preview and apply
          them.
        </p>
      </section>`,
  );
}

export function pointsUploadPage(session: Signed, view: UploadView): SafeHtml {
  const upload = view.upload;
  const path = `${uploadsPath(view.space)}/${upload.id}`;
  return layout(
    { title: `${upload.name} · Points upload`, active: 'spaces', ...session },
    html`${breadcrumbs(view.space, true)}
      <h1>Points upload: <span class="upload-name">${upload.name}</span></h1>
      ${alert(view.error)} ${stateAlert(view)}
      <section class="card" aria-labelledby="summary-title">
        <h2 id="summary-title">Summary</h2>
        <dl class="summary upload-summary">
          <dt>Uploaded</dt>
          <dd>${timeTag(iso(upload.createdAt))}</dd>
          <dt>Read as</dt>
          <dd>${upload.format === 'csv' ? 'CSV' : 'NDJSON'}</dd>
          <dt>Lines</dt>
          <dd>${n(upload.lineCount)}</dd>
          <dt>Valid lines</dt>
          <dd>${n(validLines(upload))}</dd>
          <dt>Refused lines</dt>
          <dd>${n(upload.errorCount)}</dd>
          <dt>Points granted</dt>
          <dd>${n(upload.pointsGranted)}</dd>
          <dt>Points deducted</dt>
          <dd>${n(upload.pointsDeducted)}</dd>
          <dt>Reason for lines without one</dt>
          <dd>${upload.reason ?? 'None'}</dd>
          <dt>Time of lines without one</dt>
          <dd>
            ${
              upload.occurredAt === null
                ? 'When the upload is applied'
                : timeTag(iso(upload.occurredAt), { seconds: true })
            }
          </dd>
          <dt>Status</dt>
          <dd data-upload-status>${uploadState(upload)}</dd>
        </dl>
      </section>
      ${applySection(session, view, path)} ${firstLinesSection(view)} ${errorsSection(view, path)}
      ${refusalsSection(view)}`,
  );
}

/** What became of the upload, or where its apply is. */
function stateAlert(view: UploadView): SafeHtml | string {
  const { upload, progress } = view;
  if (upload.status === 'applied')
    return alert(
      `Applied ${formatTime(upload.appliedAt === null ? null : iso(upload.appliedAt))}: ${applyResult(progress)}`,
      'notice',
    );
  // Before a stopped apply's "apply again": an expired upload cannot be.
  if (upload.expiredAt !== null)
    return alert(
      'This upload expired: its lines are no longer kept. Upload the file again to apply it.',
      'notice',
    );
  if (progress.stalled)
    return alert(
      `The apply was cut off after ${plural(progress.done, 'line')} of ${n(progress.total)} (the service may have restarted): ${applyResult(progress)} Apply again to finish: the lines already applied change nothing.`,
    );
  if (upload.status === 'stopped')
    return alert(
      `The apply stopped after ${plural(progress.done, 'line')} of ${n(progress.total)} (${upload.failure ?? 'an error'}): ${applyResult(progress)} Apply again to finish: the lines already applied change nothing.`,
    );
  return '';
}

function applySection(session: Signed, view: UploadView, path: string): SafeHtml | string {
  const { upload, progress } = view;
  const applying = upload.status === 'applying' && !progress.stalled;
  const canApply =
    upload.expiredAt === null &&
    validLines(upload) > 0 &&
    (upload.status === 'ready' || upload.status === 'stopped' || progress.stalled);
  if (!applying && !canApply) return '';
  const meter = html`<div
    class="apply-progress"
    data-apply-progress
    ${applying ? '' : new SafeHtml('hidden')}
  >
    <label for="points-apply-progress">Applying</label>
    <progress
      id="points-apply-progress"
      max="${progress.total}"
      ${applying ? new SafeHtml(`value="${progress.done}"`) : ''}
    ></progress>
    <span class="hint" data-progress-text aria-live="polite"
      >${applying ? `${n(progress.done)} of ${n(progress.total)} lines` : ''}</span
    >
  </div>`;
  return html`<section
    class="card"
    aria-labelledby="apply-title"
    data-status-url="${path}/status"
    ${applying ? new SafeHtml('data-applying') : ''}
  >
    <h2 id="apply-title">Apply</h2>
    ${
      applying
        ? html`<p>This upload is being applied. This page follows it; reload it if it does not.</p>
            ${meter}`
        : html`<p>
              Grants ${n(upload.pointsGranted)} points and deducts ${n(upload.pointsDeducted)}
              points, in ${plural(validLines(upload), 'line')}.
              ${upload.errorCount > 0 ? `The ${plural(upload.errorCount, 'refused line')} below will not be applied.` : ''}
              Lines without a time count from when they are applied. Lines applied before (the same
              file uploaded again) change nothing.
            </p>
            <form method="post" action="${path}/apply" data-points-apply>
              <input type="hidden" name="_csrf" value="${session.csrfToken}" />
              ${meter}
              <button type="submit">Apply ${plural(validLines(upload), 'line')}</button>
            </form>`
    }
  </section>`;
}

function firstLinesSection(view: UploadView): SafeHtml | string {
  if (view.first.length === 0) return '';
  // A line without its own time counts from the upload's, known once it is first applied.
  const timeOf = (line: PointsUploadLineEntity) => {
    const at = line.occurredAt ?? view.upload.occurredAt;
    return at === null ? 'When applied' : timeTag(iso(at), { seconds: true });
  };
  const rows = view.first.map(
    (line) =>
      html`<tr>
        <td data-label="Line" class="num">${n(line.line)}</td>
        <td data-label="Address"><code class="address">${line.address}</code></td>
        <td data-label="Points" class="num">${line.points === null ? '' : signed(line.points)}</td>
        <td data-label="Reason">${line.reason}</td>
        <td data-label="Time">${timeOf(line)}</td>
      </tr>`,
  );
  const total = validLines(view.upload);
  return html`<section class="card" aria-labelledby="first-title">
    <h2 id="first-title">
      ${total > view.first.length ? `The first ${n(view.first.length)} lines` : 'The lines'}
    </h2>
    ${dataTable(
      'upload-lines',
      'Valid lines of the upload',
      [{ label: 'Line', num: true }, 'Address', { label: 'Points', num: true }, 'Reason', 'Time'],
      rows,
    )}
  </section>`;
}

const signed = (points: number) => (points > 0 ? `+${n(points)}` : `−${n(-points)}`);

function errorsSection(view: UploadView, path: string): SafeHtml | string {
  const total = view.upload.errorCount;
  if (total === 0) return '';
  const first = (view.errorPage - 1) * LINES_PAGE + 1;
  const last = Math.min(view.errorPage * LINES_PAGE, total);
  const kept = view.upload.expiredAt === null;
  const pager =
    total > LINES_PAGE && kept
      ? html`<nav class="pager" aria-label="Refused lines pages">
          ${
            view.errorPage > 1
              ? html`<a href="${path}?page=${view.errorPage - 1}#errors-title" rel="prev"
                  >← Previous</a
                >`
              : html`<span></span>`
          }
          <span class="muted">${n(first)}–${n(last)} of ${n(total)}</span>
          ${
            last < total
              ? html`<a href="${path}?page=${view.errorPage + 1}#errors-title" rel="next"
                  >Next →</a
                >`
              : html`<span></span>`
          }
        </nav>`
      : '';
  return html`<section class="card" aria-labelledby="errors-title">
    <h2 id="errors-title">Refused lines</h2>
    <p>
      ${plural(total, 'line')} could not be read and will not be applied. Put the fixed lines in a
      file of their own: a changed copy of this whole file would apply its other lines again.
    </p>
    ${lineTable('upload-errors', 'Refused lines of the upload', view.errors)} ${pager}
  </section>`;
}

function refusalsSection(view: UploadView): SafeHtml | string {
  const total = view.progress.refused;
  if (total === 0 || view.refusals.length === 0) return '';
  return html`<section class="card" aria-labelledby="refusals-title">
    <h2 id="refusals-title">Refused when applied</h2>
    <p>
      ${plural(total, 'line')} refused by the ledger: nothing of them was applied.
      ${total > view.refusals.length ? `The first ${n(view.refusals.length)}:` : ''}
    </p>
    ${lineTable('upload-refusals', 'Lines refused when applied', view.refusals)}
  </section>`;
}

function lineTable(className: string, caption: string, lines: ListedLine[]): SafeHtml {
  return dataTable(
    className,
    caption,
    [{ label: 'Line', num: true }, 'Problem'],
    lines.map(
      (line) =>
        html`<tr>
          <td data-label="Line" class="num">${n(line.line)}</td>
          <td data-label="Problem">${line.message}</td>
        </tr>`,
    ),
  );
}

const BUSY_MESSAGES: Record<UploadBusy, string> = {
  account:
    'Another upload of yours is being sent or checked: wait until it is done, then send this one.',
  space:
    'Other uploads to this space are being sent or checked: send this one again in a few seconds.',
  instance: 'The server is checking other uploads: send this one again in a few seconds.',
};

/** The answer to an upload sent while the session or the server has others under way. */
export function uploadBusyPage(session: Signed, uploadsPath: string, busy: UploadBusy): SafeHtml {
  return layout(
    { title: 'Points uploads', active: 'spaces', ...session },
    html`<h1>Points uploads</h1>
      ${alert(BUSY_MESSAGES[busy])}
      <p><a href="${uploadsPath}">Back to the points uploads</a></p>`,
  );
}
