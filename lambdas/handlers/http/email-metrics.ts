// HTTP handler for GET /v1/emails/metrics: Resend's metrics shape (start_date, end_date, granularity, metrics,
// dimensions period and domain, domain_id) over the daily reputation counters of the caller's account and mode,
// plus `reputation`: the same figures over the rolling window as the stage judges them, with each subject's
// standing (docs/sending.md, "Sending reputation").
import * as z from 'zod';
import type { DomainRepository } from '../../app/domains/ports';
import {
  type Metrics,
  type MetricsDeps,
  type Reputation,
  readMetrics,
  readReputation,
  type SubjectReputation,
} from '../../app/reputation/metrics';
import type { Tenant } from '../../app/webhooks/ports';
import {
  COUNTER_RETENTION_DAYS,
  type Counts,
  dayOf,
  dayStart,
  deliveredOf,
  type RateLimits,
  rate,
} from '../../domain/email/reputation';
import { ValidationError } from '../../domain/errors';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

/** Resend's metric names: counts (`delivered` is sent less bounced: deliveredOf), then rates over `sent`. */
export const METRICS = [
  'sent',
  'delivered',
  'bounced',
  'bounced_permanent',
  'bounced_transient',
  'bounced_undetermined',
  'complained',
  'delivery_rate',
  'bounce_rate',
  'complaint_rate',
] as const;
type Metric = (typeof METRICS)[number];
const DIMENSIONS = ['period', 'domain'] as const;
/** How far back a range may start: the counters are kept COUNTER_RETENTION_DAYS, two days' margin for TTL. */
const MAX_DAYS_BACK = COUNTER_RETENTION_DAYS - 2;
const MAX_DOMAIN_IDS = 100;

/** A comma-separated list (Resend also repeats the parameter; a gateway joins repeats with commas). */
const list = <T extends string>(names: readonly T[], what: string) =>
  z
    .string()
    .transform((value, ctx) => {
      const items = [
        ...new Set(
          value
            .split(',')
            .map((item) => item.trim())
            .filter(Boolean),
        ),
      ];
      const unknown = items.filter((item) => !(names as readonly string[]).includes(item));
      if (unknown.length)
        ctx.addIssue({
          code: 'custom',
          message: `Unknown ${what}: ${unknown.join(', ')}. Known: ${names.join(', ')}.`,
        });
      return items as T[];
    })
    .meta({ description: `Comma-separated: ${names.join(', ')}.` });

const dateParam = (description: string) =>
  z
    .string()
    .refine((value) => /^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(Date.parse(value)), {
      message: 'Must be an ISO 8601 date or date-time, e.g. 2026-07-01 or 2026-07-01T00:00:00Z.',
    })
    .optional()
    .meta({ description });

const query = z.strictObject({
  start_date: dateParam(
    `The first UTC day (a date-time counts its day). Defaults to 6 days before end_date; at most ${MAX_DAYS_BACK} days ago.`,
  ),
  end_date: dateParam('The last UTC day, included; a future one is today. Defaults to today.'),
  timezone: z
    .literal('UTC', { error: 'Only UTC: the counters are kept per UTC day.' })
    .optional()
    .meta({ description: 'UTC only: periods are UTC days.' }),
  granularity: z
    .enum(['daily', 'weekly', 'monthly'], {
      error: 'Must be daily, weekly or monthly (counts are kept per UTC day; hourly is not kept).',
    })
    .default('daily')
    .meta({ description: 'The bucket size of `period`: daily, weekly (from Monday) or monthly.' }),
  metrics: list(METRICS, 'metrics').optional(),
  dimensions: list(DIMENSIONS, 'dimensions (email and broadcast are not kept)').optional(),
  domain_id: z
    .string()
    .optional()
    .meta({ description: `Comma-separated sending domain ids (at most ${MAX_DOMAIN_IDS}): only their emails.` }),
});

const metricValues = z.record(z.string(), z.number()).meta({
  description:
    'The requested metrics: counts of copies (one per recipient; `delivered` is `sent` less `bounced`) and rates (fractions: 0.05 is 5%).',
});

const thresholds = z.strictObject({ bounce_rate: z.number(), complaint_rate: z.number() });

const subjectSchema = named(
  'ReputationSubject',
  z.strictObject({
    domain_name: z.string().nullable().meta({ description: 'The sending domain; null for the whole account.' }),
    sent: integer,
    bounced: integer.meta({ description: 'Hard (permanent) bounces, as SES counts them for its bounce rate.' }),
    complained: integer,
    bounce_rate: z.number().nullable().meta({ description: 'bounced / sent (a fraction); null when none was sent.' }),
    complaint_rate: z.number().nullable().meta({ description: 'complained / sent; null when none was sent.' }),
    enough_volume: z
      .boolean()
      .meta({ description: 'Whether at least `minimum_sent` copies were sent: judged at all.' }),
    level: z
      .enum(['ok', 'warning', 'paused'])
      .meta({ description: 'What the figures call for now (a pause is only lifted by support, whatever they say).' }),
    warned_at: isoTime.nullable(),
    paused_at: isoTime.nullable().meta({ description: 'Set while sending from it is paused (403 sending_paused).' }),
    lifted_at: isoTime.nullable(),
  }),
);

const reputationSchema = named(
  'Reputation',
  z.strictObject({
    judged: z.boolean().meta({ description: 'Whether this mode is judged (live always; test mode per deployment).' }),
    status: z
      .enum(['ok', 'warning', 'paused'])
      .meta({ description: 'paused when the account or any domain is paused; warning when any is warned.' }),
    window_days: integer.meta({ description: 'The rolling window: the last N UTC days, today included.' }),
    minimum_sent: integer,
    thresholds: z.strictObject({ warning: thresholds, pause: thresholds }),
    account: subjectSchema,
    domains: z.array(subjectSchema),
  }),
  'The sending reputation as judged now (Sendflow): bounce and complaint rates over the rolling window',
);

const responses = {
  getEmailMetrics: success(
    200,
    named(
      'EmailMetrics',
      z.strictObject({
        object: z.literal('metrics'),
        start_date: isoTime,
        end_date: isoTime,
        metrics: z.array(z.enum(METRICS)),
        dimensions: z.array(z.enum(DIMENSIONS)),
        granularity: z.enum(['daily', 'weekly', 'monthly']),
        totals: metricValues,
        data: z
          .array(
            z
              .object({
                period: z.string().optional().meta({ description: 'The period’s first day (YYYY-MM-DD, UTC).' }),
                domain_id: z.string().nullable().optional().meta({ description: 'Null for a domain not registered.' }),
                domain_name: z.string().optional(),
              })
              .catchall(z.number()),
          )
          .optional()
          .meta({ description: 'One row per period and/or domain; absent when no dimension was asked for.' }),
        reputation: reputationSchema,
      }),
    ),
    "Resend's email metrics, and the sending reputation",
  ),
} as const;

export const requestSchemas: RequestSchemas = { getEmailMetrics: { query } };

type MetricsBody = Body<(typeof responses.getEmailMetrics)['schema']>;

export function emailMetricsHandlers(deps: {
  readonly reputation?: MetricsDeps;
  readonly domains: Pick<DomainRepository, 'get' | 'list'>;
}) {
  const get: RouteHandler = async ({ caller, query: raw }) => {
    const reputation = deps.reputation;
    if (!reputation) throw new Error('no reputation store is wired (see runtime/)');
    const q = validate(query, raw, 'query');
    const tenant = tenantOf(caller);
    const { from, to } = requestedRange(q, reputation.clock.now());
    const named = await namedDomains(deps, tenant, q.domain_id);
    const dimensions = q.dimensions ?? [];
    const metrics = q.metrics ?? [...METRICS];
    let counted: Metrics;
    let judged: Reputation;
    try {
      [counted, judged] = await Promise.all([
        readMetrics(reputation, tenant, {
          from,
          to,
          granularity: q.granularity,
          byPeriod: dimensions.includes('period'),
          byDomain: dimensions.includes('domain'),
          ...(named ? { domains: named } : {}),
        }),
        readReputation(reputation, tenant),
      ]);
    } catch (error) {
      // Bounded work: a tenant with counters of very many sending domains is asked for a narrower range.
      if (error instanceof RangeError)
        throw invalid('start_date', `Too many counters in this range: ${error.message}.`);
      throw error;
    }
    // Domain ids for the rows: the tenant's registered domains by name (others, e.g. test mode's, have none).
    const ids = dimensions.includes('domain')
      ? new Map((await deps.domains.list(tenant)).map((d) => [d.name.toLowerCase(), d.id]))
      : new Map<string, string>();
    const end = Math.min(reputation.clock.now(), dayStart(to) + 86_400_000);
    const body: MetricsBody = {
      object: 'metrics',
      start_date: new Date(dayStart(from)).toISOString(),
      end_date: new Date(Math.max(end, dayStart(from))).toISOString(),
      metrics,
      dimensions,
      granularity: q.granularity,
      totals: values(counted.totals, metrics),
      ...(dimensions.length
        ? {
            // The named fields, then the metrics (numbers): TypeScript cannot type an index signature beside them.
            data: counted.rows.map((row) => ({
              ...(row.period !== undefined ? { period: row.period } : {}),
              ...(row.domain !== undefined ? { domain_id: ids.get(row.domain) ?? null, domain_name: row.domain } : {}),
              ...values(row.counts, metrics),
            })) as unknown as MetricsBody['data'],
          }
        : {}),
      reputation: {
        judged: judged.judged,
        status: judged.status,
        window_days: judged.policy.windowDays,
        minimum_sent: judged.policy.minimumSent,
        thresholds: { warning: pair(judged.policy.warn), pause: pair(judged.policy.pause) },
        account: subjectView(judged.account),
        domains: judged.domains.map(subjectView),
      },
    };
    return reply(responses.getEmailMetrics, body, { 'Cache-Control': 'no-store' });
  };
  return { getEmailMetrics: get };
}

const min = (a: string, b: string) => (a < b ? a : b);

/** The UTC days asked for: end_date (today at the latest), start_date (6 days before by default, 90 back at most). */
function requestedRange(q: z.infer<typeof query>, now: number): { from: string; to: string } {
  const today = dayOf(now);
  const to = q.end_date ? min(dayOf(Date.parse(q.end_date)), today) : today;
  const from = q.start_date ? dayOf(Date.parse(q.start_date)) : dayOf(dayStart(to) - 6 * 86_400_000);
  const oldest = dayOf(dayStart(today) - MAX_DAYS_BACK * 86_400_000);
  if (from > to) throw invalid('start_date', 'Must be on or before end_date.');
  if (from < oldest) throw invalid('start_date', `Counts are kept ${MAX_DAYS_BACK} days: start on ${oldest} or later.`);
  return { from, to };
}

/** The names of the domains `domain_id` lists (the tenant's own, else 422); undefined without the parameter. */
async function namedDomains(
  deps: { readonly domains: Pick<DomainRepository, 'get'> },
  tenant: Tenant,
  domainId: string | undefined,
): Promise<string[] | undefined> {
  if (!domainId) return undefined;
  const ids = [...new Set(domainId.split(',').map((id) => id.trim()))].filter(Boolean);
  if (ids.length > MAX_DOMAIN_IDS) throw invalid('domain_id', `At most ${MAX_DOMAIN_IDS} domain ids.`);
  const found = await Promise.all(ids.map((id) => deps.domains.get(tenant, id)));
  const unknown = ids.filter((_, i) => !found[i]);
  if (unknown.length) throw invalid('domain_id', `No domain with id ${unknown.join(', ')} in this account and mode.`);
  return found.map((domain) => (domain?.name ?? '').toLowerCase());
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError('The request query is invalid.', { details: [{ path, message }] });
}

/** The requested metrics of some counts; a rate of nothing sent is 0 (Resend's totals are numbers). */
function values(counts: Counts, metrics: readonly Metric[]): Record<string, number> {
  const delivered = deliveredOf(counts);
  const derived: Record<string, number> = {
    delivered,
    delivery_rate: rate(delivered, counts.sent) ?? 0,
    bounce_rate: rate(counts.bounced_permanent, counts.sent) ?? 0,
    complaint_rate: rate(counts.complained, counts.sent) ?? 0,
  };
  return Object.fromEntries(
    metrics.map((metric) => [metric, metric in derived ? (derived[metric] as number) : counts[metric as keyof Counts]]),
  );
}

const pair = (limits: RateLimits) => ({ bounce_rate: limits.bounceRate, complaint_rate: limits.complaintRate });

/** One subject's figures over the window and its standing, as the API (and the admin CLI) show them. */
export function subjectView(s: SubjectReputation) {
  const f = s.judgment.figures;
  return {
    domain_name: s.subject.kind === 'domain' ? s.subject.domain : null,
    sent: f.sent,
    bounced: f.bounced,
    complained: f.complained,
    bounce_rate: f.bounceRate,
    complaint_rate: f.complaintRate,
    enough_volume: s.judgment.judged,
    level: s.judgment.level,
    warned_at: s.standing?.warnedAt ?? null,
    paused_at: s.standing?.pausedAt ?? null,
    lifted_at: s.standing?.liftedAt ?? null,
  };
}

export const responseSchemas: ResponseSchemas = responses;
