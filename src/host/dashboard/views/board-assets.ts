/* The board pages' part of the dashboard's stylesheet and script (assets.ts serves them together). */

export const BOARD_CSS = `
.section-head { display:flex; flex-wrap:wrap; gap:8px 16px; align-items:center; justify-content:space-between; margin-bottom:8px; }
.section-head h2 { margin:0; }
a.button { display:inline-block; text-decoration:none; }
.button.secondary { background:#fff; color:var(--accent); }
form.address-search { flex:1 1 640px; min-width:0; max-width:100%; }
form.address-search input { flex:1 1 46ch; min-width:0; font-family:ui-monospace, SFMono-Regular, Menlo, monospace; }
.search-result { overflow-wrap:anywhere; }
.board-tools { display:flex; flex-wrap:wrap; gap:8px 24px; align-items:center; justify-content:space-between; margin-top:16px; }
.board-tools .range { margin:0; font-weight:600; font-variant-numeric:tabular-nums; }
form.row.jump input { flex:0 1 12ch; width:12ch; }
table.board td.rank { white-space:nowrap; font-variant-numeric:tabular-nums; }
table.board td.who a { display:inline-flex; max-width:100%; min-width:0; }
table.board code.address { display:flex; min-width:0; word-break:normal; }
table.board code.address .head { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
table.board code.address .tail { flex-shrink:0; white-space:nowrap; }
table.board tr.current, table.board tr.current td { background:#fff4c2; }
table.board tr.current td.rank { font-weight:700; box-shadow:inset 4px 0 0 #8a6100; padding-left:12px; }
table.board tr { scroll-margin:96px 0; }
.pager { justify-content:center; }
.pager ul { list-style:none; margin:0; padding:0; display:flex; flex-wrap:wrap; gap:4px 8px; align-items:center; justify-content:center; }
.pager a, .pager .idle { display:inline-block; padding:6px 10px; }
.pager .idle, .pager .where { color:var(--muted); }
.pager .where { padding:6px 10px; font-variant-numeric:tabular-nums; }
.charts { display:grid; grid-template-columns:repeat(auto-fit, minmax(min(100%, 360px), 1fr)); gap:24px; }
figure.chart { margin:0; min-width:0; }
svg.chart { display:block; width:100%; height:auto; }
figure.chart figcaption { margin-top:8px; font-size:14px; color:var(--muted); }
figure.chart figcaption strong { color:var(--fg); }
figure.chart details { margin-top:4px; color:var(--fg); }
figure.chart summary { cursor:pointer; color:var(--accent); }
figure.chart .user { display:block; color:var(--muted); font-size:13px; }
.chart-note { margin:0; color:var(--muted); }
.status.CapReached { background:#fdf1dc; color:#7a4b00; }
.status.NotStarted, .status.Draft { background:#e6edfb; color:#1d3f8f; }
td.actions a + a { margin-left:12px; }
h1.address-title code.address { display:block; margin-top:4px; font-size:16px; font-weight:400; }
table.ledger code.key { word-break:break-all; }
table.standings th[scope="row"] { font-size:inherit; text-transform:none; letter-spacing:normal; color:var(--fg); }
@media (max-width: 640px) {
  table.board tbody tr { display:grid; grid-template-columns:auto minmax(0, 1fr) auto; column-gap:10px; align-items:baseline; padding:4px 0; line-height:1.35; }
  table.board td { display:block; padding:0; border:none; text-align:left; }
  table.board td::before { content:none; }
  table.board td.rank { grid-column:1; grid-row:1 / span 2; min-width:3.4em; }
  table.board tr.current td.rank { padding-left:8px; }
  table.board td.who { grid-column:2; grid-row:1; min-width:0; }
  table.board td.user { grid-column:2; grid-row:2; font-size:14px; color:var(--muted); overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
  table.board td.user:empty { display:none; }
  table.board td.num { grid-column:3; grid-row:1; text-align:right; white-space:nowrap; }
  table.standings th[scope="row"] { display:block; padding:4px 0; }
  table.ledger tbody tr { display:grid; grid-template-columns:minmax(0, 1fr) auto; column-gap:12px; padding:6px 0; line-height:1.35; }
  table.ledger td { display:block; padding:0; border:none; text-align:left; }
  table.ledger td::before { content:none; }
  table.ledger td[data-label="Points"] { grid-column:2; grid-row:1; text-align:right; font-weight:600; }
  table.ledger td[data-label="Key"], table.ledger td[data-label="Reason"] { grid-column:1 / span 2; font-size:14px; }
  table.ledger td[data-label="Key"]::before { content:"Key "; color:var(--muted); }
}
`;

export const BOARD_JS = `
// The board row found or gone to is highlighted: bring it into view, unless the URL names a place.
{
  const current = document.querySelector('table.board tr[aria-current="true"]');
  if (current && !location.hash) current.scrollIntoView({ block: 'center' });
}
`;
