// The dashboard's charts (issue 31, item 2): drawn from the hourly figures (a known mix of outcomes, through the
// API's own view of them), each a figure with a text alternative and the table behind it, whose counts are asserted
// here cell by cell; the sparkline says its figures in words; the SVG carries no style attribute (the CSP refuses
// inline styles) and no script.
import { describe, expect, it } from 'vitest';
import type { WindowFigures } from '../../lambdas/app/webhooks/delivery-figures';
import type { Webhook } from '../../lambdas/app/webhooks/ports';
import { alignHours, emptyHour, type HourFigures, hoursOf } from '../../lambdas/domain/webhooks/delivery-figures';
import { sparkline, stackedBars } from '../../lambdas/handlers/dashboard/pages/charts';
import { deliveryFigures, type WebhookMetricsView } from '../../lambdas/handlers/dashboard/pages/health-figures';
import { metricsView } from '../../lambdas/handlers/http/webhook-metrics';
import { tableCells } from '../support/html-tables';

const NOW = Date.UTC(2026, 11, 7, 9, 30);

function hour(at: string, figures: Partial<HourFigures>): HourFigures {
  return { ...emptyHour(at), ...figures };
}

/** 09:00: 5 succeeded (40 ms), 2 retrying (HTTP 500), 1 failed (timeout, 10 s); 07:00: 3 succeeded (80 ms). */
function knownMix(): WebhookMetricsView {
  const latency = (buckets: Record<number, number>) => Array.from({ length: 15 }, (_, i) => buckets[i] ?? 0);
  const rows = [
    hour('2026-12-07T09', {
      succeeded: 5,
      retrying: 2,
      failed: 1,
      errors: { http_5xx: 2, timeout: 1 },
      latency: latency({ 1: 5, 3: 2, 13: 1 }),
    }),
    hour('2026-12-07T07', { succeeded: 3, latency: latency({ 2: 3 }) }),
  ];
  const hours = hoursOf('24h', NOW);
  const read: WindowFigures = {
    window: '24h',
    hours: alignHours(rows, hours),
    webhooks: [{ webhook: { id: 'wh_a' } as Webhook, hours: alignHours(rows, hours) }],
  };
  return metricsView(read, null) as unknown as WebhookMetricsView;
}

describe('delivery health charts', () => {
  const markup = deliveryFigures(knownMix(), 'account', 'your endpoints').markup;

  it('draws attempts per hour by outcome, with the table behind it', () => {
    expect(tableCells(markup, 'account-outcomes-table')).toEqual([
      ['Hour (UTC)', 'Succeeded', 'Failed, retrying', 'Failed for good'],
      ['2026-12-07 07:00 UTC', '3', '0', '0'],
      ['2026-12-07 09:00 UTC', '5', '2', '1'],
    ]);
    // One bar segment per non-zero count: 3 + 1 (07:00, 09:00 succeeded), retrying and failed at 09:00.
    const figure = /<figure class="chart" id="account-outcomes"[\s\S]*?<\/figure>/.exec(markup)?.[0] ?? '';
    expect(figure.match(/<rect /g)?.length).toBe(4 + 3); // + the legend's three swatches
    expect(figure).toContain(
      '11 attempts to your endpoints: 8 succeeded, 2 failed and were retried, 1 failed for good',
    );
  });

  it('draws p50 and p95 per hour, and failures by error class, each with its table', () => {
    expect(tableCells(markup, 'account-latency-table')).toEqual([
      ['Hour (UTC)', 'p50', 'p95'],
      // 3 in (50, 100]: ranks 1.5 and 2.85 of 3, interpolated; 8 at 09:00, the 95th (rank 7.6) in (7.5 s, 10 s].
      ['2026-12-07 07:00 UTC', '75 ms', '98 ms'],
      ['2026-12-07 09:00 UTC', '45 ms', '9,000 ms'],
    ]);
    expect(tableCells(markup, 'account-errors-table')).toEqual([
      ['Error class', 'Count'],
      ['http 5xx', '2'],
      ['timeout', '1'],
    ]);
  });

  it('gives every chart a caption, an image name and description, and no style attribute or script', () => {
    for (const id of ['account-outcomes', 'account-latency', 'account-errors']) {
      expect(markup).toContain(`<figure class="chart" id="${id}" aria-labelledby="${id}-caption">`);
      expect(markup).toContain(`role="img" aria-labelledby="${id}-title ${id}-desc"`);
    }
    expect(markup).not.toMatch(/style=|<script/);
  });

  it('says when nothing was attempted, and lists no error class', () => {
    const empty = metricsView(
      { window: '7d', hours: alignHours([], hoursOf('7d', NOW)), webhooks: [] },
      'wh_a',
    ) as unknown as WebhookMetricsView;
    const quiet = deliveryFigures(empty, 'webhook', 'this endpoint').markup;
    expect(quiet).toContain('No delivery attempts to this endpoint in the last 7 days.');
    expect(quiet).toContain('No failed attempts in the last 7 days.');
    expect(tableCells(quiet, 'webhook-outcomes-table')).toEqual([
      ['Hour (UTC)', 'Succeeded', 'Failed, retrying', 'Failed for good'],
      ['Nothing to show.'],
    ]);
  });
});

describe('sparkline', () => {
  it('names its figures in words and breaks its line where an hour had no attempt', () => {
    const svg = sparkline([1, 0.5, null, 0], 'Success rate per hour, last 24 h').markup;
    expect(svg).toContain(
      'aria-label="Success rate per hour, last 24 h: 50% on average over 3 hours with attempts, lowest 0%, latest 0%"',
    );
    expect(svg.match(/<polyline /g)).toHaveLength(1);
    expect(svg.match(/<circle /g)).toHaveLength(1);
  });
});

describe('stacked bars', () => {
  it('scales to a round maximum and escapes labels', () => {
    const markup = stackedBars({
      id: 't',
      title: 'T <b>',
      summary: 's',
      series: [{ key: 'a', label: 'A', color: '#000' }],
      rows: [{ label: '<x>', tick: 'x', values: { a: 7 } }],
      rowHeader: 'Row',
    }).markup;
    expect(markup).toContain('>10<'); // the axis top: 7 rounded up
    expect(markup).not.toContain('<b>');
    expect(tableCells(markup, 't-table')).toEqual([
      ['Row', 'A'],
      ['&lt;x&gt;', '7'],
    ]);
  });
});
