// HTTP handlers for GET /v1/webhooks/metrics (every webhook of the caller's mode, added up, with each one's
// success rate per hour) and GET /v1/webhooks/:id/metrics: delivery attempts per hour by outcome, failures by
// error class, p50/p95 latency, over the last 24 hours or 7 days, from the hourly figures kept as attempts are
// recorded (app/webhooks/delivery-figures), never from the delivery log.
import * as z from 'zod';
import {
  type DeliveryFigureStore,
  type ReadFiguresDeps,
  readFigures,
  type WindowFigures,
} from '../../app/webhooks/delivery-figures';
import {
  attemptsOf,
  errorsByClass,
  FIGURE_WINDOWS,
  type FigureWindow,
  type HourFigures,
  hourStart,
  percentile,
  successRate,
  totalOf,
} from '../../domain/webhooks/delivery-figures';
import { ERROR_CLASSES } from '../../domain/webhooks/error-class';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const WINDOWS = Object.keys(FIGURE_WINDOWS) as [FigureWindow, ...FigureWindow[]];

const query = z.strictObject({
  window: z
    .enum(WINDOWS, { error: 'Must be 24h or 7d.' })
    .default('24h')
    .meta({ description: 'The last 24 hours (24 hourly rows) or the last 7 days (168), each ending with this hour.' }),
});

const rate = z.number().min(0).max(1).nullable();
const latency = integer.nullable();

const figuresFields = {
  attempts: integer,
  succeeded: integer.meta({ description: 'Attempts that delivered (2xx).' }),
  retrying: integer.meta({ description: 'Attempts that failed with a retry scheduled.' }),
  failed: integer.meta({
    description: 'Attempts that failed for good: the retry schedule ran out, or a manual retry or test send failed.',
  }),
  success_rate: rate.meta({ description: 'succeeded / attempts; null without an attempt.' }),
  p50_ms: latency.meta({
    description: 'Median time to an answer of the attempts that made a request, estimated from latency buckets.',
  }),
  p95_ms: latency.meta({ description: '95th percentile, estimated likewise; null without a request.' }),
};

const totalsSchema = named(
  'DeliveryFigures',
  z.strictObject({
    ...figuresFields,
    errors: z
      .array(
        z.strictObject({
          error_class: z.enum(ERROR_CLASSES),
          count: integer.meta({ description: 'Failed attempts of this class in the window.', example: 3 }),
        }),
      )
      .meta({ description: 'Failed attempts (retrying and failed) by error class, most frequent first.' }),
  }),
);

const hourSchema = named(
  'DeliveryFiguresHour',
  z.strictObject({
    hour: isoTime.meta({ description: 'The hour’s start (ISO 8601, UTC): its figures count attempts made in it.' }),
    ...figuresFields,
  }),
);

const metricsSchema = named(
  'WebhookMetrics',
  z.strictObject({
    object: z.literal('webhook_metrics'),
    webhook_id: z.string().nullable().meta({ description: 'Null for every webhook of the mode added up.' }),
    window: z.enum(WINDOWS),
    start: isoTime.meta({ description: 'The first hour’s start.' }),
    end: isoTime.meta({ description: 'The last hour’s end (the current hour, still counting).' }),
    totals: totalsSchema,
    data: z.array(hourSchema).meta({ description: 'Every hour of the window, oldest first, zeros included.' }),
    webhooks: z
      .array(
        z.strictObject({
          webhook_id: z.string(),
          totals: totalsSchema,
          success_rate_by_hour: z
            .array(rate)
            .meta({ description: "The webhook's success rate of each hour of `data` (null: no attempt)." }),
        }),
      )
      .meta({ description: 'Each webhook counted (one for GET /v1/webhooks/:id/metrics).' }),
  }),
  'Delivery attempts by outcome, failures by error class and latency, per hour, kept as attempts are recorded',
);

const responses = {
  getWebhooksMetrics: success(200, metricsSchema, 'The figures of every webhook of this mode, added up'),
  getWebhookMetrics: success(200, metricsSchema, "The webhook's figures"),
} as const;

export const requestSchemas: RequestSchemas = { getWebhooksMetrics: { query }, getWebhookMetrics: { query } };
export const responseSchemas: ResponseSchemas = responses;

type MetricsBody = Body<typeof metricsSchema>;

export function webhookMetricsHandlers(
  deps: Omit<ReadFiguresDeps, 'figures'> & { deliveryFigures?: DeliveryFigureStore },
) {
  const answer =
    (id: 'getWebhooksMetrics' | 'getWebhookMetrics'): RouteHandler =>
    async ({ caller, params, query: raw }) => {
      const figures = deps.deliveryFigures;
      if (!figures) throw new Error('no delivery figure store is wired (see runtime/)');
      const { window } = validate(query, raw, 'query');
      const webhookId = id === 'getWebhookMetrics' ? (params.id ?? '') : undefined;
      const read = await readFigures({ ...deps, figures }, tenantOf(caller), window, webhookId);
      return reply(responses[id], metricsView(read, webhookId ?? null), { 'Cache-Control': 'no-store' });
    };
  return { getWebhooksMetrics: answer('getWebhooksMetrics'), getWebhookMetrics: answer('getWebhookMetrics') };
}

function figuresView(f: HourFigures) {
  return {
    attempts: attemptsOf(f),
    succeeded: f.succeeded,
    retrying: f.retrying,
    failed: f.failed,
    success_rate: successRate(f),
    p50_ms: percentile(f.latency, 0.5),
    p95_ms: percentile(f.latency, 0.95),
  };
}

function totalsView(rows: readonly HourFigures[]) {
  const total = totalOf(rows);
  return {
    ...figuresView(total),
    errors: errorsByClass(total).map((e) => ({ error_class: e.errorClass, count: e.count })),
  };
}

/** The figures as the API shows them. */
export function metricsView(read: WindowFigures, webhookId: string | null): MetricsBody {
  const first = read.hours[0] as HourFigures;
  const last = read.hours.at(-1) as HourFigures;
  return {
    object: 'webhook_metrics',
    webhook_id: webhookId,
    window: read.window,
    start: new Date(hourStart(first.hour)).toISOString(),
    end: new Date(hourStart(last.hour) + 3_600_000).toISOString(),
    totals: totalsView(read.hours),
    data: read.hours.map((h) => ({ hour: new Date(hourStart(h.hour)).toISOString(), ...figuresView(h) })),
    webhooks: read.webhooks.map((w) => ({
      webhook_id: w.webhook.id,
      totals: totalsView(w.hours),
      success_rate_by_hour: w.hours.map(successRate),
    })),
  };
}
