/* The dashboard's only stylesheet and script, served from our origin so the CSP can forbid inline code. */

export const DASHBOARD_CSS = `
:root { --fg:#1d2330; --muted:#5b6475; --bg:#f5f6f8; --card:#fff; --line:#dde1e8; --accent:#2457c5; --danger:#b3261e; --ok:#1e7b34; }
* { box-sizing: border-box; }
body { margin:0; font:16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); }
/* Focus: a dark ring on light ground, a yellow one on the dark header; never removed. */
:focus-visible { outline:3px solid #1d3f8f; outline-offset:2px; }
header :focus-visible { outline-color:#f0b429; }
main:focus { outline:none; }
.skip { position:absolute; left:-999px; } .skip:focus { left:8px; top:8px; background:#fff; color:#1d3f8f; padding:4px 8px; z-index:2; }
header { display:flex; flex-wrap:wrap; gap:8px 24px; align-items:center; justify-content:space-between; padding:12px 24px; background:#14213d; color:#fff; }
header a, header .link { color:#fff; }
.brand { font-weight:700; }
nav { display:flex; flex-wrap:wrap; gap:16px; align-items:center; }
nav a[aria-current="page"] { font-weight:700; text-decoration-thickness:3px; }
.who { color:#c8d1e4; margin-right:8px; font-size:14px; }
main { max-width:1100px; margin:0 auto; padding:24px; }
h1 { margin:0 0 16px; font-size:28px; } h2 { margin:0 0 8px; font-size:20px; } h3 { margin:0 0 8px; font-size:17px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:20px; margin:0 0 20px; }
.narrow { max-width:420px; margin:40px auto; }
label { display:block; font-weight:600; margin:12px 0 4px; }
.row label { margin:0; align-self:center; }
input, select { font:inherit; padding:8px 10px; border:1px solid #b9c0cc; border-radius:6px; width:100%; background:#fff; }
button, .button { font:inherit; padding:8px 16px; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
/* A red action: red words on light ground (links), white words on red (buttons). The button rule
   comes after .danger and is more specific, so no red ever lands on red. */
.danger, a.danger { color:var(--danger); }
button.danger, .button.danger, button.danger:hover, button.danger:focus { background:var(--danger); border-color:var(--danger); color:#fff; }
button.link { background:none; border:none; padding:0; text-decoration:underline; }
form .row, form.row { display:flex; flex-wrap:wrap; gap:8px; align-items:center; }
form.row input, form.row select { width:auto; flex:1 1 180px; }
form > button { margin-top:16px; }
form.row > button { margin-top:0; }
td form > button, td form.row > button { margin-top:0; }
form .row input { width:auto; flex:1 1 180px; }
form .row select { width:auto; flex:0 1 280px; }
form .row > .hint { flex-basis:100%; }
fieldset { border:1px solid var(--line); border-radius:6px; margin:12px 0 0; padding:8px 14px 12px; }
legend { font-weight:600; padding:0 4px; }
.check { display:flex; flex-wrap:wrap; align-items:baseline; gap:2px 8px; margin-top:6px; }
.check input { width:auto; margin:0; }
.check label { display:inline; margin:0; }
.hint { color:var(--muted); font-size:14px; }
.scope { padding:1px 6px; border-radius:4px; background:#eef0f4; font-size:13px; }
.inline { display:inline; }
.keep-tokens { display:inline-flex; gap:.25rem; align-items:center; margin-right:.5rem; }
.alert { padding:10px 14px; border-radius:6px; margin:12px 0; }
.alert.error { background:#fdecea; color:#8a1c14; border:1px solid #f5c2bd; }
.alert.notice { background:#e8f3ea; color:#14532d; border:1px solid #b7dcc0; }
.created { border-color:#e0b400; background:#fffbea; }
.warning { color:#6b4e00; }
.copy-row { display:flex; gap:8px; } .copy-row input { font-family:ui-monospace, monospace; }
table { width:100%; border-collapse:collapse; margin-top:16px; }
th, td { text-align:left; padding:8px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:13px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
.num { text-align:right; font-variant-numeric:tabular-nums; }
code { font-family:ui-monospace, SFMono-Regular, Menlo, monospace; font-size:14px; }
.address { word-break:break-all; }
.muted, .empty { color:var(--muted); }
.filters { display:flex; flex-wrap:wrap; gap:12px 32px; }
.pager { display:flex; justify-content:space-between; align-items:center; margin-top:12px; }
.spaces { list-style:none; padding:0; display:grid; grid-template-columns:repeat(auto-fill, minmax(260px, 1fr)); gap:16px; }
.spaces .card { margin:0; }
.status { padding:2px 8px; border-radius:999px; font-size:13px; background:#eef0f4; }
.status.Active { background:#e3f4e7; color:var(--ok); } .status.Deleted, .status.Expired { background:#f3e6e6; color:#7a2c24; }
.badge { display:inline-block; padding:1px 8px; border-radius:999px; font-size:13px; font-weight:600; background:#eef0f4; color:var(--muted); vertical-align:middle; }
.badge.private { background:#fdf1dc; color:#7a4b00; } .badge.role { background:#e6edfb; color:#1d3f8f; }
h1 .badge { font-size:14px; }
td.actions { white-space:nowrap; } td.actions > * + * { margin-left:12px; }
td form.row select { width:auto; flex:0 1 auto; }
.from { display:block; }
td.detail { word-break:break-word; font-size:14px; }
dl.summary { display:grid; grid-template-columns:max-content 1fr; gap:6px 16px; margin:0; }
dl.summary dt { font-weight:600; } dl.summary dd { margin:0; }
ul.plain { list-style:none; margin:0; padding:0; }
.row.buttons { margin-top:16px; } form .row.buttons > button { margin-top:0; }
.downloads { display:flex; flex-wrap:wrap; gap:8px 16px; margin:0; align-items:center; }
.narrow-form { max-width:420px; }
form .draft-restored { flex-basis:100%; margin-top:0; }
[hidden] { display:none !important; }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
@media (max-width: 640px) {
  main { padding:16px 12px; } header { padding:12px; }
  table thead { position:absolute; left:-9999px; }
  table tr { display:block; border-bottom:1px solid var(--line); padding:8px 0; }
  table td { display:flex; justify-content:space-between; gap:12px; border:none; padding:4px 0; text-align:right; }
  table td::before { content:attr(data-label); font-weight:600; color:var(--muted); text-align:left; flex-shrink:0; }
  .copy-row { flex-direction:column; }
}
`;

export const DASHBOARD_JS = `
// A select with data-shows-when-date shows the element it names only while "date" is chosen
// (without this script the element simply stays visible).
for (const select of document.querySelectorAll('select[data-shows-when-date]')) {
  const target = document.getElementById(select.dataset.showsWhenDate);
  const sync = () => { target.hidden = select.value !== 'date'; };
  select.addEventListener('change', sync);
  sync();
}
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  try {
    await navigator.clipboard.writeText(field.value);
  } catch {
    field.select();
    document.execCommand('copy');
  }
  button.textContent = 'Copied';
});
// Drafts: what an admin typed survives a session that ended before the form was sent. On submit,
// a POST form's plain fields (never _csrf, hidden, read-only or password fields) go to
// sessionStorage. The next page decides: the sign-in page holds on to the draft; the page reached
// by signing in puts it back into the same form, when the same account signed in (a shared tab
// never hands one account's typing to another); any other page means the form was answered
// (done, or refused and shown again with its fields), so the draft goes.
(() => {
  const KEY = 'lb-dashboard-draft';
  const SKIPPED = ['hidden', 'password', 'file', 'submit', 'button', 'reset', 'image'];
  const read = () => {
    try { return JSON.parse(sessionStorage.getItem(KEY) || 'null'); } catch { return null; }
  };
  const write = (draft) => {
    try {
      if (draft) sessionStorage.setItem(KEY, JSON.stringify(draft));
      else sessionStorage.removeItem(KEY);
    } catch {
      // Storage off: no drafts, the forms work as ever.
    }
  };
  const kept = (field) =>
    Boolean(field.name) && field.name !== '_csrf' && !field.disabled && !field.readOnly &&
    !SKIPPED.includes(field.type) && !/password/.test(field.autocomplete || '') &&
    !field.hasAttribute('data-secret');
  const toggles = (field) => field.type === 'checkbox' || field.type === 'radio';
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method !== 'post') return;
    if (form.hasAttribute('data-no-draft')) return;
    const fields = [];
    for (const field of form.elements) {
      if (!kept(field)) continue;
      if (toggles(field)) fields.push({ name: field.name, value: field.value, checked: field.checked });
      else if (field.tagName === 'SELECT' && field.multiple)
        fields.push({ name: field.name, values: [...field.selectedOptions].map((o) => o.value) });
      else fields.push({ name: field.name, value: field.value });
    }
    const account = document.body.dataset.account;
    write({ action: form.getAttribute('action'), account, fields, signingIn: false });
  });
  const draft = read();
  if (!draft) return;
  if (document.querySelector('form[data-sign-in]')) {
    if (!draft.signingIn) write({ ...draft, signingIn: true });
    return;
  }
  write(null);
  if (!draft.signingIn || draft.account !== document.body.dataset.account) return;
  const form = [...document.querySelectorAll('form[method="post"]')]
    .find((candidate) => candidate.getAttribute('action') === draft.action);
  if (!form) return;
  for (const saved of draft.fields) {
    for (const field of form.elements) {
      if (field.name !== saved.name || !kept(field)) continue;
      if (toggles(field)) {
        if ('checked' in saved && field.value === saved.value) field.checked = saved.checked;
      } else if (Array.isArray(saved.values)) {
        for (const option of field.options) option.selected = saved.values.includes(option.value);
      } else if (typeof saved.value === 'string') {
        field.value = saved.value;
      }
      field.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }
  const note = document.createElement('p');
  note.className = 'alert notice draft-restored';
  note.setAttribute('role', 'status');
  note.textContent = 'What you typed before signing in is back: check it and send it again.';
  form.prepend(note);
})();
`;

/** The dashboard's icon: a podium on the header's navy, served as the favicon too. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#14213d"/>
<rect x="4" y="16" width="8" height="10" fill="#c8d1e4"/>
<rect x="12" y="8" width="8" height="18" fill="#f0b429"/>
<rect x="20" y="12" width="8" height="14" fill="#e3f4e7"/>
</svg>
`;
