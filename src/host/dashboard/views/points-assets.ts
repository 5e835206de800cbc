/* The points pages' part of the dashboard's stylesheet and script (assets.ts serves them together). */

export const POINTS_CSS = `
.points-direction { display:flex; flex-wrap:wrap; gap:4px 24px; }
.points-direction legend { margin-bottom:2px; }
.points-fields { display:grid; grid-template-columns:minmax(0, 2fr) minmax(0, 1fr); gap:0 16px; }
.points-fields .hint { display:block; margin-top:4px; }
.points-many { margin:16px 0 0; }
.points-upload textarea { display:block; width:100%; font:14px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; padding:8px 10px; border:1px solid #b9c0cc; border-radius:6px; resize:vertical; }
.points-upload .hint p { margin:4px 0; }
.points-upload pre.sample { margin:4px 0 0; padding:8px 10px; background:#eef0f4; color:var(--fg); border-radius:6px; overflow-x:auto; font-size:13px; }
.upload-progress, .apply-progress { margin-top:16px; }
.upload-progress progress, .apply-progress progress { display:block; width:100%; height:18px; margin:4px 0; accent-color:var(--accent); }
.upload-name { overflow-wrap:anywhere; }
.crumbs { margin:0 0 8px; }
dl.upload-summary dd { overflow-wrap:anywhere; }
@media (max-width: 640px) {
  .points-fields { grid-template-columns:minmax(0, 1fr); }
  dl.upload-summary { grid-template-columns:minmax(0, 1fr); gap:0; }
  dl.upload-summary dd { margin-bottom:8px; }
}
`;

/*
 * No template literal inside: this is itself one. Everything in a block, so that no name clashes
 * with the other pages' scripts in the same file.
 */
export const POINTS_JS = `
{
  // The single points form: its button says what it will do once grant or deduct is chosen.
  const pointsForm = document.querySelector('form[data-points-form]');
  if (pointsForm) {
    const button = pointsForm.querySelector('[data-points-submit]');
    const sync = () => {
      const chosen = pointsForm.querySelector('input[name="direction"]:checked');
      const deduct = chosen !== null && chosen.value === 'deduct';
      button.textContent = chosen === null ? 'Adjust points' : deduct ? 'Deduct points' : 'Grant points';
      button.classList.toggle('danger', deduct);
    };
    pointsForm.addEventListener('change', sync);
    sync();
    // Refused, the page comes back at its top: take the reader to the form's message.
    const refusal = pointsForm.parentElement.querySelector('.alert[role="alert"]');
    if (refusal) {
      refusal.tabIndex = -1;
      refusal.focus();
    }
  }

  const count = (n) => Number(n).toLocaleString('en-US');
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // The file field works only with this script (a form without it would send the file's name).
  const enhance = () => {
    for (const field of document.querySelectorAll('[data-upload-file]')) field.hidden = false;
  };
  enhance();

  const showError = (form, message) => {
    let box = form.parentElement.querySelector('[data-js-error]');
    if (!box) {
      box = document.createElement('p');
      box.className = 'alert error';
      box.setAttribute('role', 'alert');
      box.dataset.jsError = '';
      form.before(box);
    }
    box.textContent = message;
  };

  // Sends a form's fields with XMLHttpRequest, for its upload progress; null when unreachable.
  const send = (form, body, onProgress) =>
    new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', form.action);
      xhr.setRequestHeader('content-type', 'application/x-www-form-urlencoded');
      if (onProgress) {
        xhr.upload.addEventListener('progress', onProgress);
        xhr.upload.addEventListener('load', () => onProgress(null));
      }
      xhr.addEventListener('load', () => resolve(xhr));
      xhr.addEventListener('error', () => resolve(null));
      xhr.send(body);
    });

  // The main of a page the server answered with (not a proxy's error page), or null.
  const mainOf = (xhr) => {
    const type = xhr.getResponseHeader('content-type') || '';
    if (!type.startsWith('text/html')) return null;
    const page = new DOMParser().parseFromString(xhr.responseText, 'text/html');
    const main = page.querySelector('main');
    return main ? { page, main } : null;
  };

  // A redirect's page is opened; a refusal's page takes this one's place, as without the script.
  // A busy server's answer (429, 503) is told above the form, which keeps the chosen file.
  const follow = (xhr, form) => {
    if (xhr === null) {
      showError(form, 'The server could not be reached, or your session ended. Check the connection, reload the page, and send again.');
      return false;
    }
    if (xhr.status === 200) {
      location.assign(xhr.responseURL);
      return true;
    }
    const answer = mainOf(xhr);
    if (answer && (xhr.status === 429 || xhr.status === 503)) {
      const alert = answer.main.querySelector('[role="alert"]');
      showError(form, alert ? alert.textContent.trim() : 'The server is busy: send again in a few seconds.');
      return false;
    }
    if (answer) {
      document.querySelector('main').replaceWith(answer.main);
      document.title = answer.page.title;
      enhance();
      const alert = answer.main.querySelector('[role="alert"]');
      if (alert) {
        alert.tabIndex = -1;
        alert.focus();
      }
      return false;
    }
    showError(form, 'The server refused this (HTTP ' + xhr.status + '). Send it again; if that fails too, try a smaller file.');
    return false;
  };

  const meter = (box) => ({
    bar: box.querySelector('progress'),
    text: box.querySelector('[data-progress-text]'),
  });

  const upload = async (form) => {
    const input = form.querySelector('input[type="file"]');
    const file = input && input.files.length > 0 ? input.files[0] : null;
    const max = Number(form.dataset.maxBytes);
    if (file && file.size > max) {
      showError(form, 'The file is ' + (file.size / 1048576).toFixed(1) + ' MB: at most 10 MB a file. Split it into smaller files.');
      return;
    }
    const body = new URLSearchParams(new FormData(form));
    if (file) {
      body.set('content', await file.text());
      body.set('name', file.name);
    }
    const box = form.querySelector('[data-upload-progress]');
    const button = form.querySelector('button[type="submit"]');
    const { bar, text } = meter(box);
    box.hidden = false;
    button.disabled = true;
    bar.value = 0;
    text.textContent = 'Sending…';
    const xhr = await send(form, body.toString(), (event) => {
      if (event === null) {
        bar.removeAttribute('value');
        text.textContent = 'Sent. Checking the lines…';
      } else if (event.lengthComputable) {
        bar.value = Math.round((event.loaded / event.total) * 100);
        text.textContent = bar.value + '% sent (' + count(event.loaded) + ' of ' + count(event.total) + ' bytes)';
      }
    });
    if (!follow(xhr, form)) {
      box.hidden = true;
      button.disabled = false;
    }
  };

  const readStatus = async (url) => {
    try {
      const answer = await fetch(url, { headers: { accept: 'application/json' } });
      return answer.ok ? await answer.json() : null;
    } catch {
      return null;
    }
  };

  const showStatus = (box, status) => {
    const { bar, text } = meter(box);
    bar.max = Math.max(status.total, 1);
    bar.value = status.done;
    text.textContent = count(status.done) + ' of ' + count(status.total) + ' lines applied';
  };

  // Follows an apply on the server until it ends, then shows its outcome (the page, reloaded).
  const followApply = async (box, url) => {
    for (let misses = 0; misses < 60; ) {
      await sleep(1000);
      const status = await readStatus(url);
      if (status === null) {
        misses++;
        continue;
      }
      misses = 0;
      if (status.status !== 'applying' || status.stalled) return true;
      showStatus(box, status);
    }
    return false;
  };

  const apply = async (form) => {
    const url = form.closest('[data-status-url]').dataset.statusUrl;
    const box = form.querySelector('[data-apply-progress]');
    const button = form.querySelector('button[type="submit"]');
    box.hidden = false;
    button.disabled = true;
    meter(box).text.textContent = 'Starting…';
    let finished = false;
    (async () => {
      while (!finished) {
        await sleep(500);
        const status = await readStatus(url);
        if (!finished && status && status.status === 'applying') showStatus(box, status);
      }
    })();
    const xhr = await send(form, new URLSearchParams(new FormData(form)).toString());
    finished = true;
    if (xhr !== null && (xhr.status === 200 || mainOf(xhr))) {
      if (!follow(xhr, form)) button.disabled = false;
      return;
    }
    // No answer of the server's own: a proxy gave up waiting (a 504), or the connection dropped.
    // The apply goes on on the server: follow it there.
    meter(box).text.textContent = 'Still being applied on the server. This page follows it…';
    if (await followApply(box, url)) return location.reload();
    showError(form, 'The server does not answer. Reload the page later to see where the apply is.');
  };

  const busy = new WeakSet();
  document.addEventListener('submit', (event) => {
    const form = event.target;
    const run = form.matches('form[data-points-upload]')
      ? upload
      : form.matches('form[data-points-apply]')
        ? apply
        : null;
    if (run === null) return;
    event.preventDefault();
    if (busy.has(form)) return;
    busy.add(form);
    run(form).finally(() => busy.delete(form));
  });

  // A page opened while its upload is being applied follows it, and shows the outcome when done.
  const applying = document.querySelector('[data-status-url][data-applying]');
  if (applying) {
    (async () => {
      for (;;) {
        await sleep(1000);
        const status = await readStatus(applying.dataset.statusUrl);
        if (status === null || status.status !== 'applying' || status.stalled) return location.reload();
        showStatus(applying.querySelector('[data-apply-progress]'), status);
      }
    })();
  }
}
`;
