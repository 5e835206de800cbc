// A hand-written SVG line chart for bench/pages.js: linear x (depth), log10 y (latency ms).
/* eslint-disable */

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Round tick step for a linear axis up to `max`, about `count` ticks. */
function linearTicks(max, count = 5) {
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const ticks = [];
  for (let t = 0; t <= max + step / 2; t += step) ticks.push(t);
  return ticks;
}

const compact = (n) =>
  n >= 1e6 ? `${+(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : `${n}`;

/**
 * series: [{ name, color, points: [{ x, y }] }] (points with y <= 0 or NaN are left out).
 * Returns the SVG text.
 */
function lineChart({ title, subtitle, xLabel, yLabel, series }) {
  const width = 760;
  const m = { left: 70, right: 30, top: 56, bottom: 64 + 22 * series.length };
  const height = 340 + m.top + m.bottom;
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const usable = series.map((s) => ({
    ...s,
    points: s.points.filter((p) => Number.isFinite(p.y) && p.y > 0),
  }));
  const all = usable.flatMap((s) => s.points);
  const maxX = Math.max(1, ...all.map((p) => p.x));
  const lo = Math.floor(Math.log10(Math.min(...all.map((p) => p.y), 10)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...all.map((p) => p.y), 1))));
  const xs = linearTicks(maxX);
  const xMax = xs[xs.length - 1];
  const px = (x) => m.left + (x / xMax) * plotW;
  const py = (y) => m.top + plotH - ((Math.log10(y) - lo) / (hi - lo || 1)) * plotH;

  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${m.left}" y="22" font-size="15" font-weight="bold">${escape(title)}</text>`,
  );
  if (subtitle) out.push(`<text x="${m.left}" y="40" fill="#555">${escape(subtitle)}</text>`);
  // y grid: 1, 2, 5 per decade.
  for (let d = lo; d <= hi; d++) {
    for (const f of [1, 2, 5]) {
      const y = f * 10 ** d;
      if (y < 10 ** lo || y > 10 ** hi) continue;
      const major = f === 1;
      out.push(
        `<line x1="${m.left}" x2="${m.left + plotW}" y1="${py(y)}" y2="${py(y)}" stroke="${major ? '#ccc' : '#eee'}"/>`,
        `<text x="${m.left - 6}" y="${py(y) + 4}" text-anchor="end" fill="${major ? '#000' : '#888'}">${+y.toPrecision(3)}</text>`,
      );
    }
  }
  for (const x of xs) {
    out.push(
      `<line x1="${px(x)}" x2="${px(x)}" y1="${m.top}" y2="${m.top + plotH}" stroke="#eee"/>`,
      `<text x="${px(x)}" y="${m.top + plotH + 18}" text-anchor="middle">${compact(x)}</text>`,
    );
  }
  out.push(
    `<rect x="${m.left}" y="${m.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`,
    `<text x="${m.left + plotW / 2}" y="${m.top + plotH + 40}" text-anchor="middle">${escape(xLabel)}</text>`,
    `<text transform="translate(18 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`,
  );
  usable.forEach((s, i) => {
    if (s.points.length > 0) {
      const d = s.points
        .map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`)
        .join(' ');
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
      for (const p of s.points) {
        out.push(
          `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5" fill="${s.color}"><title>${escape(`${s.name}: depth ${p.x}, ${p.y} ms`)}</title></circle>`,
        );
      }
    }
    // The legend: one row per series under the x axis.
    const ly = m.top + plotH + 66 + i * 22;
    const lx = m.left;
    out.push(
      `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"/>`,
      `<circle cx="${lx + 12}" cy="${ly}" r="3.5" fill="${s.color}"/>`,
      `<text x="${lx + 32}" y="${ly + 4}">${escape(s.name)}${s.points.length === 0 ? ' (no data)' : ''}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { lineChart };
