// The dashboard's chart components: server-rendered inline SVG (no script, no CDN, nothing the CSP refuses: only
// presentation attributes, no style attribute), each a <figure> whose caption says in words what it shows, whose
// SVG is an image with a title and description, and whose data is the table behind it in a <details>. Pages give
// rows of figures; nothing here reads data.
import { html, type Safe } from '../http';

export interface Series {
  readonly key: string;
  readonly label: string;
  readonly color: string;
}

export interface ChartRow {
  /** The row's full label (the table's first column), e.g. `2026-12-07 09:00 UTC`. */
  readonly label: string;
  /** A short label for the x axis, e.g. `09:00`; only some are drawn. */
  readonly tick: string;
  /** One value per series key; null: nothing to show (a gap in a line, an empty cell). */
  readonly values: Readonly<Record<string, number | null>>;
}

interface ChartSpec {
  /** Unique on the page: the figure's ids derive from it (`<id>-table` is the table behind it). */
  readonly id: string;
  readonly title: string;
  /** The text alternative: what the chart shows, in a sentence or two (totals, the notable). */
  readonly summary: string;
  readonly series: readonly Series[];
  readonly rows: readonly ChartRow[];
  /** The first column's header, e.g. `Hour (UTC)`. */
  readonly rowHeader: string;
  /** How a value reads (axis and table). */
  readonly format?: (value: number) => string;
  /** Rows the table leaves out (e.g. hours without an attempt), said under it. */
  readonly tableRows?: (row: ChartRow) => boolean;
  readonly omitted?: string;
}

/** The drawing area, in viewBox units. */
const W = 720;
const H = 200;
const LEFT = 52;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 26;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;

export const COLORS = {
  good: '#1b7f3b',
  warn: '#b26a00',
  bad: '#b3261e',
  info: '#0b57d0',
  muted: '#6b6b6b',
} as const;

const plain = (value: number) => value.toLocaleString('en-US');
const round1 = (n: number) => Math.round(n * 10) / 10;

/** A scale's top: the maximum rounded up to 1, 2 or 5 times a power of ten (at least 1). */
export function niceMax(max: number): number {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].find((m) => m * power >= max) ?? 10;
  return step * power;
}

/** About six ticks along the x axis, evenly spaced, the last one included. */
function tickRows(count: number): number[] {
  if (count <= 1) return [0];
  const every = Math.max(1, Math.ceil(count / 6));
  const picked = Array.from({ length: count }, (_, i) => i).filter((i) => i % every === 0);
  return picked;
}

function axes(spec: ChartSpec, top: number): Safe {
  const format = spec.format ?? plain;
  const slot = PLOT_W / Math.max(1, spec.rows.length);
  const ticks = tickRows(spec.rows.length);
  const grid = [0, 0.5, 1].map((f) => {
    const y = round1(TOP + PLOT_H - f * PLOT_H);
    return html`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y}" y2="${y}" stroke="#ddd" stroke-width="1"/><text x="${LEFT - 6}" y="${y + 4}" text-anchor="end" font-size="11" fill="#444">${format(round1(top * f))}</text>`;
  });
  const labels = ticks.map(
    (i) =>
      html`<text x="${round1(LEFT + slot * i + slot / 2)}" y="${H - 8}" text-anchor="middle" font-size="11" fill="#444">${spec.rows[i]?.tick ?? ''}</text>`,
  );
  return html`<g aria-hidden="true">${grid}${labels}</g>`;
}

function legend(series: readonly Series[]): Safe {
  return html`<ul class="legend">${series.map(
    (s) =>
      html`<li><svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill="${s.color}"/></svg> ${s.label}</li>`,
  )}</ul>`;
}

function table(spec: ChartSpec): Safe {
  const format = spec.format ?? plain;
  const rows = spec.tableRows ? spec.rows.filter(spec.tableRows) : spec.rows;
  const body = rows.length
    ? rows.map(
        (row) =>
          html`<tr><th scope="row">${row.label}</th>${spec.series.map((s) => {
            const v = row.values[s.key];
            return html`<td>${v === null || v === undefined ? '—' : format(v)}</td>`;
          })}</tr>`,
      )
    : html`<tr><td colspan="${spec.series.length + 1}">Nothing to show.</td></tr>`;
  return html`<details><summary>Table of “${spec.title}”</summary><div class="table-wrap" tabindex="0"><table id="${spec.id}-table"><caption>${spec.title}</caption>
<thead><tr><th scope="col">${spec.rowHeader}</th>${spec.series.map((s) => html`<th scope="col">${s.label}</th>`)}</tr></thead>
<tbody>${body}</tbody></table></div>${spec.omitted ? html`<p class="hint">${spec.omitted}</p>` : ''}</details>`;
}

function figure(spec: ChartSpec, drawing: Safe): Safe {
  const { id } = spec;
  return html`<figure class="chart" id="${id}" aria-labelledby="${id}-caption">
<figcaption id="${id}-caption"><strong>${spec.title}</strong>. ${spec.summary}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false"><title id="${id}-title">${spec.title}</title><desc id="${id}-desc">${spec.summary}</desc>${drawing}</svg>
${legend(spec.series)}${table(spec)}</figure>`;
}

/** Bars per row, the series stacked (counts: attempts by outcome, emails by status). */
export function stackedBars(spec: ChartSpec): Safe {
  const totals = spec.rows.map((row) => spec.series.reduce((n, s) => n + (row.values[s.key] ?? 0), 0));
  const top = niceMax(Math.max(0, ...totals));
  const slot = PLOT_W / Math.max(1, spec.rows.length);
  const width = round1(Math.max(1, slot * 0.8));
  const bars = spec.rows.map((row, i) => {
    let base = TOP + PLOT_H;
    const x = round1(LEFT + slot * i + (slot - width) / 2);
    return spec.series.map((s) => {
      const v = row.values[s.key] ?? 0;
      if (!v) return '';
      const h = (v / top) * PLOT_H;
      base -= h;
      return html`<rect x="${x}" y="${round1(base)}" width="${width}" height="${round1(h)}" fill="${s.color}"><title>${row.label}: ${v} ${s.label.toLowerCase()}</title></rect>`;
    });
  });
  return figure(spec, html`${axes(spec, top)}<g>${bars}</g>`);
}

/** One line per series across the rows, broken where a value is null (latency percentiles, rates). */
export function lines(spec: ChartSpec & { readonly top?: number }): Safe {
  const values = spec.rows.flatMap((row) => spec.series.map((s) => row.values[s.key] ?? 0));
  const top = spec.top ?? niceMax(Math.max(0, ...values));
  const slot = PLOT_W / Math.max(1, spec.rows.length);
  const point = (i: number, v: number) =>
    `${round1(LEFT + slot * i + slot / 2)},${round1(TOP + PLOT_H - (Math.min(v, top) / top) * PLOT_H)}`;
  const paths = spec.series.map((s) => {
    const runs: string[][] = [[]];
    spec.rows.forEach((row, i) => {
      const v = row.values[s.key];
      if (v === null || v === undefined) runs.push([]);
      else runs.at(-1)?.push(point(i, v));
    });
    return runs
      .filter((run) => run.length)
      .map((run) =>
        run.length === 1
          ? html`<circle cx="${run[0]?.split(',')[0]}" cy="${run[0]?.split(',')[1]}" r="2.5" fill="${s.color}"/>`
          : html`<polyline points="${run.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"/>`,
      );
  });
  return figure(spec, html`${axes(spec, top)}<g>${paths}</g>`);
}

/** Horizontal bars, one per item, longest first (failures by error class). */
export function rankedBars(spec: {
  readonly id: string;
  readonly title: string;
  readonly summary: string;
  readonly items: readonly { readonly label: string; readonly count: number }[];
  readonly columnHeader: string;
  readonly empty: string;
}): Safe {
  const { id, items } = spec;
  if (!items.length) return html`<p id="${id}">${spec.empty}</p>`;
  const top = Math.max(...items.map((item) => item.count));
  const rowH = 24;
  const height = items.length * rowH + 8;
  const labelW = 170;
  const barW = W - labelW - 60;
  const bars = items.map((item, i) => {
    const y = 4 + i * rowH;
    const w = round1(Math.max(2, (item.count / top) * barW));
    return html`<text x="${labelW - 8}" y="${y + 16}" text-anchor="end" font-size="13" fill="#1a1a1a">${item.label}</text>
<rect x="${labelW}" y="${y + 3}" width="${w}" height="${rowH - 8}" fill="${COLORS.bad}"/><text x="${labelW + w + 6}" y="${y + 16}" font-size="13" fill="#1a1a1a">${plain(item.count)}</text>`;
  });
  return html`<figure class="chart" id="${id}" aria-labelledby="${id}-caption">
<figcaption id="${id}-caption"><strong>${spec.title}</strong>. ${spec.summary}</figcaption>
<svg viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false"><title id="${id}-title">${spec.title}</title><desc id="${id}-desc">${spec.summary}</desc>${bars}</svg>
<details><summary>Table of “${spec.title}”</summary><div class="table-wrap" tabindex="0"><table id="${id}-table"><caption>${spec.title}</caption>
<thead><tr><th scope="col">${spec.columnHeader}</th><th scope="col">Count</th></tr></thead>
<tbody>${items.map((item) => html`<tr><th scope="row">${item.label}</th><td>${plain(item.count)}</td></tr>`)}</tbody></table></div></details></figure>`;
}

/**
 * A small trend line of rates (0..1) with its words as the image's name; the values are its title too (a
 * tooltip). Null values are gaps. `label` says what and over when, e.g. "Success rate, last 24 h".
 */
export function sparkline(values: readonly (number | null)[], label: string): Safe {
  const known = values.filter((v): v is number => v !== null);
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  const words = known.length
    ? `${label}: ${pct(known.reduce((a, b) => a + b, 0) / known.length)} on average over ${known.length} hour${known.length === 1 ? '' : 's'} with attempts, lowest ${pct(Math.min(...known))}, latest ${pct(known.at(-1) as number)}`
    : `${label}: no attempts`;
  const w = 120;
  const h = 24;
  const step = w / Math.max(1, values.length - 1);
  const runs: string[][] = [[]];
  values.forEach((v, i) => {
    if (v === null) runs.push([]);
    else runs.at(-1)?.push(`${round1(i * step)},${round1(2 + (1 - v) * (h - 4))}`);
  });
  const marks = runs
    .filter((run) => run.length)
    .map((run) =>
      run.length === 1
        ? html`<circle cx="${run[0]?.split(',')[0]}" cy="${run[0]?.split(',')[1]}" r="1.5" fill="${COLORS.info}"/>`
        : html`<polyline points="${run.join(' ')}" fill="none" stroke="${COLORS.info}" stroke-width="1.5"/>`,
    );
  return html`<svg class="sparkline" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${words}" focusable="false"><title>${words}</title><line x1="0" x2="${w}" y1="2" y2="2" stroke="#ddd" stroke-width="1"/>${marks}</svg>`;
}
