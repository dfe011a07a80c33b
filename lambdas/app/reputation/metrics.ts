// Use cases of the read side: GET /v1/emails/metrics (Resend's shape: sent, delivered, bounced, complained and
// their rates, by period and sending domain) from the daily counters, and the tenant's reputation as judged now
// (the same figures over the rolling window, each subject's level and standing), shown there and on the dashboard.
import {
  addCounts,
  type Counts,
  type DailyCounts,
  dayOf,
  daysBetween,
  isJudgedMode,
  type Judgment,
  judge,
  NO_COUNTS,
  type ReputationPolicy,
  sumDays,
  windowOf,
} from '../../domain/email/reputation';
import type { Clock } from '../ports';
import type { Tenant } from '../webhooks/ports';
import { ACCOUNT, type ReputationStore, type Standing, type Subject, subjectKey } from './ports';

/**
 * The most counter items one request reads (about 5 MB, 1,200 read units): a wider request (many sending domains
 * over a long range) is asked to narrow its range.
 */
export const METRICS_MAX_ITEMS = 40_000;

export type Granularity = 'daily' | 'weekly' | 'monthly';

export interface MetricsRequest {
  /** `YYYY-MM-DD`, both included. */
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
  readonly byPeriod: boolean;
  readonly byDomain: boolean;
  /** Only these sending domains (names, lower-cased); all when absent. */
  readonly domains?: readonly string[];
}

export interface MetricsRow {
  readonly period?: string;
  readonly domain?: string;
  readonly counts: Counts;
}

export interface Metrics {
  readonly totals: Counts;
  /** Empty unless a dimension was asked for. */
  readonly rows: readonly MetricsRow[];
}

export interface MetricsDeps {
  readonly store: Pick<ReputationStore, 'countsBetween' | 'standings'>;
  readonly policy: ReputationPolicy;
  readonly clock: Clock;
}

/** The period a day falls in: itself, the Monday that starts its ISO week, or the first of its month. */
export function periodOf(day: string, granularity: Granularity): string {
  if (granularity === 'daily') return day;
  if (granularity === 'monthly') return `${day.slice(0, 7)}-01`;
  const t = Date.parse(`${day}T00:00:00.000Z`);
  const weekday = (new Date(t).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return dayOf(t - weekday * 86_400_000);
}

export async function readMetrics(deps: MetricsDeps, tenant: Tenant, request: MetricsRequest): Promise<Metrics> {
  const counts = await deps.store.countsBetween(tenant, request.from, request.to, METRICS_MAX_ITEMS);
  const days = daysBetween(request.from, request.to);
  const wanted = request.domains ? new Set(request.domains) : null;
  const domains = Object.entries(counts.domains)
    .filter(([name]) => !wanted || wanted.has(name))
    .sort(([a], [b]) => a.localeCompare(b));
  // With a domain filter, the figures are those domains' (an email's counts are under its sending domain).
  const sources: [string | undefined, DailyCounts][] = wanted ? domains : [[undefined, counts.account]];
  const totals = sources.reduce((sum, [, daily]) => addCounts(sum, sumDays(daily, days)), NO_COUNTS);
  if (!request.byPeriod && !request.byDomain) return { totals, rows: [] };
  const periods = [...new Set(days.map((day) => periodOf(day, request.granularity)))];
  const inPeriod = (period: string) => days.filter((day) => periodOf(day, request.granularity) === period);
  const rows: MetricsRow[] = [];
  if (!request.byDomain) {
    for (const period of periods) {
      const counts = sources.reduce((sum, [, daily]) => addCounts(sum, sumDays(daily, inPeriod(period))), NO_COUNTS);
      rows.push({ period, counts });
    }
    return { totals, rows };
  }
  for (const period of request.byPeriod ? periods : [undefined]) {
    const span = period === undefined ? days : inPeriod(period);
    for (const [domain, daily] of domains) {
      const counts = sumDays(daily, span);
      if (COUNTED(counts)) rows.push({ ...(period !== undefined ? { period } : {}), domain, counts });
    }
  }
  return { totals, rows };
}

const COUNTED = (counts: Counts) => Object.values(counts).some((n) => n > 0);

/** One subject as judged now. */
export interface SubjectReputation {
  readonly subject: Subject;
  readonly judgment: Judgment;
  readonly standing: Standing | undefined;
}

export interface Reputation {
  /** Whether this tenant's mode is judged at all (live always; test mode per the stage). */
  readonly judged: boolean;
  readonly policy: ReputationPolicy;
  /** The worst standing: `paused` when any subject is paused, `warning` when any is warned, else `ok`. */
  readonly status: 'ok' | 'warning' | 'paused';
  readonly account: SubjectReputation;
  /** Each sending domain with sends in the window or a standing, by name. */
  readonly domains: readonly SubjectReputation[];
}

/** The tenant's reputation now: the window's counters (one range read) and its standings. */
export async function readReputation(deps: MetricsDeps, tenant: Tenant): Promise<Reputation> {
  const days = windowOf(deps.clock.now(), deps.policy.windowDays);
  const [counts, standings] = await Promise.all([
    deps.store.countsBetween(tenant, days[0] as string, days.at(-1) as string, METRICS_MAX_ITEMS),
    deps.store.standings(tenant),
  ]);
  const byKey = new Map(standings.map((s) => [subjectKey(s.subject), s]));
  const view = (subject: Subject, daily: DailyCounts): SubjectReputation => {
    const standing = byKey.get(subjectKey(subject));
    return { subject, standing, judgment: judge(sumDays(daily, days, standing?.baseline), deps.policy) };
  };
  const names = new Set([
    ...Object.keys(counts.domains),
    ...standings.flatMap((s) => (s.subject.kind === 'domain' ? [s.subject.domain] : [])),
  ]);
  const domains = [...names].sort().map((domain) => view({ kind: 'domain', domain }, counts.domains[domain] ?? {}));
  const account = view(ACCOUNT, counts.account);
  const all = [account, ...domains];
  const judged = isJudgedMode(tenant.mode, deps.policy);
  const status = !judged
    ? 'ok'
    : all.some((s) => s.standing?.pausedAt)
      ? 'paused'
      : all.some((s) => s.standing?.warnedAt)
        ? 'warning'
        : 'ok';
  return { judged, policy: deps.policy, status, account, domains };
}
