import { compact, count } from './board-format';
import { dataTable, html, SafeHtml } from './html';

/** Entries whose points lie in [from, to]. */
export interface PointsBucket {
  from: number;
  to: number;
  entries: number;
}

/** How a board's entries spread over their points, as of `asOf` (ms). */
export interface PointsDistribution {
  /** `log`: buckets on the 1-2-5 series, for boards whose points span two decades or more. */
  scale: 'log' | 'linear';
  buckets: PointsBucket[];
  entries: number;
  asOf: number;
}

/*
 * The board's charts as inline SVG, drawn on the server: no script, and nothing the CSP forbids
 * (presentation attributes such as fill= are not inline styles). Each is an image with a title and
 * a description, and its numbers are also a table under a disclosure, for whoever cannot see it.
 */

/** One bar of the top entries chart, and the row of its table. */
export interface TopEntry {
  rank: number;
  points: number;
  address: string;
  username: string | null;
  /** The address page. */
  href: string;
}

const WIDTH = 400;
/** Text size in viewBox units: about 12 px on a phone, 15 px in a desktop's half-width column. */
const FONT_SIZE = 14;
const INK = '#1d2330';
const MUTED = '#5b6475';
const BAR = '#2457c5';
const GRID = '#dde1e8';

/** A number as SVG coordinates want it: two decimals at most. */
const at = (value: number) => String(Math.round(value * 100) / 100);

/** "5–9" for a bucket of several values, "7" for a bucket of one. */
const bucketLabel = (from: number, to: number) =>
  from === to ? count(from) : `${count(from)}–${count(to)}`;

/** A line of the chart's caption: when its numbers were read (the chart is cached briefly). */
const asOfText = (asOf: number) => `as of ${new Date(asOf).toISOString().slice(11, 19)} UTC`;

/** The histogram of a board's points, with its numbers as a table. */
export function distributionChart(distribution: PointsDistribution): SafeHtml {
  const buckets = distribution.buckets;
  if (buckets.length === 0) return html``;
  const [left, right, top, bottom] = [44, 10, 12, 44];
  const height = 240;
  const plotWidth = WIDTH - left - right;
  const plotHeight = height - top - bottom;
  const most = Math.max(...buckets.map((b) => b.entries), 1);
  const slot = plotWidth / buckets.length;
  // Each labelled bar shows where its range starts, under its left edge; at most six labels, so
  // that they never run into each other.
  const labelEvery = Math.ceil(buckets.length / 6);
  const bars = buckets.map((bucket, i) => {
    const barHeight = bucket.entries === 0 ? 0 : Math.max(1, (bucket.entries / most) * plotHeight);
    const x = left + i * slot;
    return html`<rect
        x="${at(x + 1)}"
        y="${at(top + plotHeight - barHeight)}"
        width="${at(Math.max(1, slot - 2))}"
        height="${at(barHeight)}"
        fill="${BAR}"
      />${
        i % labelEvery === 0
          ? html`<line
                x1="${at(x)}"
                x2="${at(x)}"
                y1="${top + plotHeight}"
                y2="${top + plotHeight + 5}"
                stroke="${MUTED}"
              />
              <text x="${at(x)}" y="${height - bottom + 20}" text-anchor="middle">
                ${compact(bucket.from)}
              </text>`
          : ''
      }`;
  });
  const grid = [0, 0.5, 1].map((share) => {
    const y = top + plotHeight - share * plotHeight;
    return html`<line
        x1="${left}"
        x2="${WIDTH - right}"
        y1="${at(y)}"
        y2="${at(y)}"
        stroke="${GRID}"
      />
      <text x="${left - 6}" y="${at(y + 4)}" text-anchor="end"
        >${compact(Math.round(most * share))}</text
      >`;
  });
  const peak = buckets.reduce((best, b) => (b.entries > best.entries ? b : best));
  const first = buckets[0];
  const last = buckets[buckets.length - 1];
  const description =
    `${count(distribution.entries)} entries with ${bucketLabel(first.from, last.to)} points, ` +
    `in ${buckets.length} ranges${distribution.scale === 'log' ? ' that widen as points grow (log scale)' : ' of equal width'}; ` +
    `the most entries, ${count(peak.entries)}, have ${bucketLabel(peak.from, peak.to)} points.`;
  const rows = buckets.map(
    (b) =>
      html`<tr>
        <td data-label="Points">${bucketLabel(b.from, b.to)}</td>
        <td data-label="Entries" class="num">${count(b.entries)}</td>
      </tr>`,
  );
  return html`<figure class="chart">
    <svg
      class="chart"
      viewBox="0 0 ${WIDTH} ${height}"
      role="img"
      aria-labelledby="distribution-title distribution-desc"
      font-size="${FONT_SIZE}"
      fill="${INK}"
    >
      <title id="distribution-title">Points distribution</title>
      <desc id="distribution-desc">${description}</desc>
      ${grid} ${bars}
      <line
        x1="${left}"
        x2="${WIDTH - right}"
        y1="${top + plotHeight}"
        y2="${top + plotHeight}"
        stroke="${MUTED}"
      />
      <text x="${left + plotWidth / 2}" y="${height - 4}" text-anchor="middle" fill="${MUTED}">
        Points${distribution.scale === 'log' ? ' (log scale)' : ''}
      </text>
    </svg>
    <figcaption>
      <strong>Points distribution</strong>: the board's ${count(distribution.entries)} entries per
      range of points, ${asOfText(distribution.asOf)}. An address at 0 points or less is not on the
      board.
      <details>
        <summary>The numbers</summary>
        ${dataTable('chart-data', 'Points distribution', ['Points', { label: 'Entries', num: true }], rows)}
      </details>
    </figcaption>
  </figure>`;
}

/** A short name for a bar: the username, else the address shortened in the middle. */
function barName(entry: TopEntry): string {
  if (entry.username)
    return entry.username.length > 16 ? `${entry.username.slice(0, 15)}…` : entry.username;
  const a = entry.address;
  return a.length > 14 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a;
}

/** The top entries as horizontal bars, with their ranks, names and points as a table. */
export function topEntriesChart(entries: readonly TopEntry[], asOf: number): SafeHtml {
  if (entries.length === 0) return html``;
  const [left, right, top, rowHeight] = [132, 48, 8, 24];
  const height = top * 2 + entries.length * rowHeight;
  const plotWidth = WIDTH - left - right;
  const most = Math.max(entries[0].points, 1);
  const bars = entries.map((entry, i) => {
    const y = top + i * rowHeight;
    const width = Math.max(1, (entry.points / most) * plotWidth);
    return html`<text x="${left - 8}" y="${y + 17}" text-anchor="end">
        ${count(entry.rank)}. ${barName(entry)}
      </text>
      <rect x="${left}" y="${y + 3}" width="${at(width)}" height="${rowHeight - 6}" fill="${BAR}" />
      <text x="${at(left + width + 6)}" y="${y + 17}">${compact(entry.points)}</text>`;
  });
  const leader = entries[0];
  const description =
    `The ${entries.length} highest entries, from ${count(leader.points)} points (${leader.username ?? leader.address}) ` +
    `to ${count(entries[entries.length - 1].points)} points.`;
  const rows = entries.map(
    (entry) =>
      html`<tr>
        <td data-label="Rank" class="num">${count(entry.rank)}</td>
        <td data-label="Address">
          <a href="${entry.href}"><code class="address">${entry.address}</code></a>
          ${entry.username ? html`<span class="user">${entry.username}</span>` : ''}
        </td>
        <td data-label="Points" class="num">${count(entry.points)}</td>
      </tr>`,
  );
  return html`<figure class="chart">
    <svg
      class="chart"
      viewBox="0 0 ${WIDTH} ${height}"
      role="img"
      aria-labelledby="top-title top-desc"
      font-size="${FONT_SIZE}"
      fill="${INK}"
    >
      <title id="top-title">Top ${entries.length} entries</title>
      <desc id="top-desc">${description}</desc>
      ${bars}
    </svg>
    <figcaption>
      <strong>Top ${entries.length}</strong>: points of the highest entries, ${asOfText(asOf)}.
      <details>
        <summary>The numbers</summary>
        ${dataTable('chart-data', `Top ${entries.length} entries`, [{ label: 'Rank', num: true }, 'Address', { label: 'Points', num: true }], rows)}
      </details>
    </figcaption>
  </figure>`;
}
