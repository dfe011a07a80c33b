// Pictures of delivery health, as HTML fragments the overview and webhook pages place: delivery attempts per hour by
// outcome, p50/p95 latency and failures by error class over 24 h or 7 days (GET /v1/webhooks/metrics and
// /v1/webhooks/:id/metrics: hourly aggregates kept as attempts are recorded), each webhook's success-rate
// sparkline for the list, and emails by status per day with bounce and complaint rates (GET /v1/emails/metrics).
// Every chart is a charts.ts component: a text alternative and the table behind it.
import type { ApiClient } from '../api-client';
import { BASE, href, html, type Safe } from '../http';
import { type ChartRow, COLORS, lines, rankedBars, type Series, sparkline, stackedBars } from './charts';

export const WINDOWS = { '24h': 'Last 24 hours', '7d': 'Last 7 days' } as const;
export type Window = keyof typeof WINDOWS;

/** The window a page's `?window=` asks for: 24 h unless it names another. */
export const windowOf = (query: Readonly<Record<string, string>>): Window => (query.window === '7d' ? '7d' : '24h');

interface Figures {
  attempts: number;
  succeeded: number;
  retrying: number;
  failed: number;
  success_rate: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
}

export interface WebhookMetricsView {
  window: Window;
  totals: Figures & { errors: { error_class: string; count: number }[] };
  data: (Figures & { hour: string })[];
  webhooks: { webhook_id: string; totals: Figures; success_rate_by_hour: (number | null)[] }[];
}

const OUTCOMES: readonly Series[] = [
  { key: 'succeeded', label: 'Succeeded', color: COLORS.good },
  { key: 'retrying', label: 'Failed, retrying', color: COLORS.warn },
  { key: 'failed', label: 'Failed for good', color: COLORS.bad },
];

const LATENCIES: readonly Series[] = [
  { key: 'p50_ms', label: 'p50', color: COLORS.info },
  { key: 'p95_ms', label: 'p95', color: COLORS.warn },
];

const pct = (rate: number | null) => (rate === null ? '—' : `${+(rate * 100).toFixed(1)}%`);
const ms = (value: number | null) => (value === null ? '—' : `${value.toLocaleString('en-US')} ms`);
const count = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** `2026-12-07T09:00:00.000Z` as the table says it, and as the axis does for a window. */
function hourRow(iso: string, window: Window, values: Record<string, number | null>): ChartRow {
  const label = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  const tick = window === '24h' ? iso.slice(11, 16) : `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
  return { label, tick, values };
}

/** Links to the other window, keeping the page's path. */
function windowSwitch(path: string, window: Window): Safe {
  return html`<p class="actions">${(Object.keys(WINDOWS) as Window[]).map((w) =>
    w === window
      ? html`<strong aria-current="true">${WINDOWS[w]}</strong>`
      : html`<a href="${href(path, { window: w })}">${WINDOWS[w]}</a>`,
  )}</p>`;
}

/** The three charts of a window's figures, with their headline figures in words. */
export function deliveryFigures(m: WebhookMetricsView, idPrefix: string, subject: string): Safe {
  const t = m.totals;
  const period = WINDOWS[m.window].toLowerCase();
  const active = m.data.filter((h) => h.attempts > 0);
  const busiest = active.reduce<(typeof active)[number] | null>(
    (a, b) => (a && a.attempts >= b.attempts ? a : b),
    null,
  );
  const outcomes = stackedBars({
    id: `${idPrefix}-outcomes`,
    title: `Delivery attempts per hour by outcome, ${period}`,
    summary: t.attempts
      ? `${count(t.attempts, 'attempt')} to ${subject}: ${t.succeeded.toLocaleString('en-US')} succeeded, ${t.retrying.toLocaleString('en-US')} failed and were retried, ${t.failed.toLocaleString('en-US')} failed for good (success rate ${pct(t.success_rate)}). ${busiest ? `Busiest hour: ${busiest.hour.slice(0, 16).replace('T', ' ')} UTC with ${count(busiest.attempts, 'attempt')}.` : ''}`
      : `No delivery attempts to ${subject} in the ${period}.`,
    series: OUTCOMES,
    rows: m.data.map((h) =>
      hourRow(h.hour, m.window, { succeeded: h.succeeded, retrying: h.retrying, failed: h.failed }),
    ),
    rowHeader: 'Hour (UTC)',
    tableRows: (row) => OUTCOMES.some((s) => (row.values[s.key] ?? 0) > 0),
    omitted: 'Hours without an attempt are left out.',
  });
  const latency = lines({
    id: `${idPrefix}-latency`,
    title: `Response time per hour (p50 and p95), ${period}`,
    summary:
      t.p50_ms === null
        ? `No request was made to ${subject} in the ${period}.`
        : `Over the ${period}: half of the requests were answered within about ${ms(t.p50_ms)}, 95% within about ${ms(t.p95_ms)} (estimated from latency buckets).`,
    series: LATENCIES,
    rows: m.data.map((h) => hourRow(h.hour, m.window, { p50_ms: h.p50_ms, p95_ms: h.p95_ms })),
    rowHeader: 'Hour (UTC)',
    format: (v) => `${v.toLocaleString('en-US')} ms`,
    tableRows: (row) => row.values.p50_ms !== null,
    omitted: 'Hours without a request are left out.',
  });
  const failed = t.errors.reduce((n, e) => n + e.count, 0);
  const classes = rankedBars({
    id: `${idPrefix}-errors`,
    title: `Failed attempts by error class, ${period}`,
    summary: failed
      ? `${count(failed, 'failed attempt')}: ${t.errors.map((e) => `${e.error_class.replaceAll('_', ' ')} ${e.count}`).join(', ')}.`
      : '',
    items: t.errors.map((e) => ({ label: e.error_class.replaceAll('_', ' '), count: e.count })),
    columnHeader: 'Error class',
    empty: `No failed attempts in the ${period}.`,
  });
  return html`<dl class="facts"><dt>Attempts</dt><dd>${t.attempts.toLocaleString('en-US')}</dd><dt>Success rate</dt><dd>${pct(t.success_rate)}</dd>
<dt>p50 / p95</dt><dd>${ms(t.p50_ms)} / ${ms(t.p95_ms)}</dd></dl>${outcomes}${latency}${classes}`;
}

/**
 * The delivery health section of a page: its window switch and charts, for one webhook (`webhookId`) or every
 * webhook of the mode. `path` is the page's own (the switch links back to it).
 */
export async function deliveryHealthSection(
  api: ApiClient,
  options: { readonly path: string; readonly window: Window; readonly webhookId?: string },
): Promise<Safe> {
  const { path, window, webhookId } = options;
  const { body } = await api.get<WebhookMetricsView>(
    webhookId ? `/webhooks/${webhookId}/metrics` : '/webhooks/metrics',
    { window },
  );
  const subject = webhookId ? 'this endpoint' : 'your endpoints';
  return html`<section aria-labelledby="health-h"><h2 id="health-h">Delivery health</h2>${windowSwitch(path, window)}
<p class="hint">Counted as attempts are made (every webhook's hourly figures, kept 8 days): docs/dashboard.md, "Charts".</p>
${deliveryFigures(body, webhookId ? 'webhook' : 'account', subject)}</section>`;
}

/** Each webhook's success-rate sparkline over the last 24 h (one API call for the whole list). */
export async function successSparklines(api: ApiClient): Promise<Map<string, Safe>> {
  const { body } = await api.get<WebhookMetricsView>('/webhooks/metrics', { window: '24h' });
  return new Map(
    body.webhooks.map((w) => [w.webhook_id, sparkline(w.success_rate_by_hour, 'Success rate per hour, last 24 h')]),
  );
}

interface EmailMetricsView {
  start_date: string;
  end_date: string;
  totals: Record<string, number>;
  data?: ({ period: string } & Record<string, number>)[];
}

const EMAIL_STATUSES: readonly Series[] = [
  { key: 'delivered', label: 'Delivered', color: COLORS.good },
  { key: 'bounced', label: 'Bounced', color: COLORS.bad },
];

const EMAIL_RATES: readonly Series[] = [
  { key: 'bounce_rate', label: 'Bounce rate', color: COLORS.bad },
  { key: 'complaint_rate', label: 'Complaint rate', color: COLORS.warn },
];

/** Emails by status per day and the bounce and complaint rates, over the last 7 days (GET /v1/emails/metrics). */
export async function emailFiguresSection(api: ApiClient): Promise<Safe> {
  const { body } = await api.get<EmailMetricsView>('/emails/metrics', {
    dimensions: 'period',
    granularity: 'daily',
    metrics: 'sent,delivered,bounced,complained,bounce_rate,complaint_rate',
  });
  const days = body.data ?? [];
  const t = body.totals;
  const sent = t.sent ?? 0;
  const row = (day: (typeof days)[number], values: Record<string, number | null>): ChartRow => ({
    label: day.period,
    tick: day.period.slice(5),
    values,
  });
  const byStatus = stackedBars({
    id: 'emails-status',
    title: 'Emails by status per day, last 7 days',
    summary: sent
      ? `${count(sent, 'copy')} sent (one per recipient): ${(t.delivered ?? 0).toLocaleString('en-US')} delivered, ${(t.bounced ?? 0).toLocaleString('en-US')} bounced, ${(t.complained ?? 0).toLocaleString('en-US')} complaints.`
      : 'No email sent in the last 7 days.',
    series: EMAIL_STATUSES,
    rows: days.map((d) => row(d, { delivered: d.delivered ?? 0, bounced: d.bounced ?? 0 })),
    rowHeader: 'Day (UTC)',
  });
  const complaints = html`<p class="hint">Complaints per day: ${days
    .map((d) => `${d.period.slice(5)} ${d.complained ?? 0}`)
    .join(', ')}.</p>`;
  const rates = lines({
    id: 'emails-rates',
    title: 'Bounce and complaint rates per day, last 7 days',
    summary: sent
      ? `Over the 7 days: bounce rate ${pct(t.bounce_rate ?? 0)}, complaint rate ${pct(t.complaint_rate ?? 0)} of copies sent.`
      : 'No email sent in the last 7 days: no rates.',
    series: EMAIL_RATES,
    rows: days.map((d) =>
      row(
        d,
        d.sent
          ? { bounce_rate: d.bounce_rate ?? 0, complaint_rate: d.complaint_rate ?? 0 }
          : { bounce_rate: null, complaint_rate: null },
      ),
    ),
    rowHeader: 'Day (UTC)',
    format: (v) => `${+(v * 100).toFixed(2)}%`,
  });
  return html`<section aria-labelledby="email-figures-h"><h2 id="email-figures-h">Emails</h2>
<p><a href="${BASE}/emails">All emails</a> · figures from <code>GET /v1/emails/metrics</code>.</p>${byStatus}${complaints}${rates}</section>`;
}
