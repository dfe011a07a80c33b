// Ports of sending reputation (issue 29): the daily counters (copies sent, each bounce and complaint), and each
// subject's standing (the account, or one of its sending domains): warned, paused, lifted by an operator.
import type { Breach, CountField, DailyCounts } from '../../domain/email/reputation';
import type { SendflowEvent } from '../../domain/events';
import type { Outbox, PendingEvents } from '../outbox';
import type { Tenant } from '../webhooks/ports';

/** Who a standing is about: the tenant as a whole, or one sending domain of it. */
export type Subject = { readonly kind: 'account' } | { readonly kind: 'domain'; readonly domain: string };

export const ACCOUNT: Subject = Object.freeze({ kind: 'account' });

/** The subject's stored key: `account`, or `domain:<name>`. */
export function subjectKey(subject: Subject): string {
  return subject.kind === 'account' ? 'account' : `domain:${subject.domain}`;
}

export function subjectOf(key: string): Subject | null {
  if (key === 'account') return ACCOUNT;
  return key.startsWith('domain:') && key.length > 7 ? { kind: 'domain', domain: key.slice(7) } : null;
}

/** The figures a warning or pause was made on, as stored with it. */
export interface NotedFigures {
  readonly sent: number;
  readonly bounced: number;
  readonly complained: number;
  readonly bounceRate: number | null;
  readonly complaintRate: number | null;
  readonly breaches: readonly Breach[];
}

/** One subject's standing. Absent (no item): never warned, never paused. */
export interface Standing {
  readonly subject: Subject;
  /** ISO 8601: when the current warning episode began (cleared when the figures are back under the warning). */
  readonly warnedAt?: string;
  readonly warning?: NotedFigures;
  /** ISO 8601: when its sending was paused; only an operator lifts it. */
  readonly pausedAt?: string;
  readonly pause?: NotedFigures;
  /** The last lift: when, the operator's note, and the counts it left behind (judged no more). */
  readonly liftedAt?: string;
  readonly liftNote?: string;
  readonly baseline?: DailyCounts;
}

/** What one count adds: amounts per field (a bounce's are 1s; a batch's sent copies, their number), to one sending domain's day. */
export interface CountEntry {
  readonly day: string;
  readonly domain: string | null;
  readonly counts: Readonly<Partial<Record<CountField, number>>>;
  readonly spread: string;
}

/** Counts per day of the tenant and of each of its sending domains. */
export interface TenantCounts {
  readonly account: DailyCounts;
  readonly domains: Readonly<Record<string, DailyCounts>>;
}

export interface ReputationStore {
  /** Where warnings and pauses keep their events until relayed (the reconciler sweeps it). */
  readonly outbox: Outbox;
  /**
   * Adds `counts` to a sending domain's counters for the day (the tenant's figures are its domains' summed; with no
   * domain, they count for the tenant only): a send worker's batch of copies sent (app/reputation/sent-tally), or
   * one bounce or complaint. `spread` (any string, e.g. an email or event id) picks the counter shard, so one
   * tenant's writes never heat one item.
   */
  count(tenant: Tenant, entry: CountEntry): Promise<void>;
  /**
   * The tenant's counts from `from` to `to` (`YYYY-MM-DD`, included), with every domain that has any. Reads at
   * most `maxItems` counter items; past it, a RangeError (the caller narrows the range).
   */
  countsBetween(tenant: Tenant, from: string, to: string, maxItems: number): Promise<TenantCounts>;
  /** Every subject of the tenant with a standing (warned, paused or lifted once). */
  standings(tenant: Tenant): Promise<Standing[]>;
  /**
   * Notes a warning and/or a pause, each only if not already noted (one conditional write), with `events` in the
   * item's outbox. Null when the condition failed (another judgment noted it first).
   */
  note(
    tenant: Tenant,
    subject: Subject,
    change: {
      readonly at: string;
      readonly warning?: NotedFigures;
      readonly pause?: NotedFigures;
    },
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null>;
  /** Ends a warning episode (the figures are back under the warning) unless paused meanwhile or noted anew. */
  clearWarning(tenant: Tenant, subject: Subject, warnedAt: string): Promise<void>;
  /**
   * An operator lifts a pause: the pause and its warning go, `baseline` (the window's counts now) is kept so the
   * next judgments count only what follows. The standing after, or null when the subject was not paused.
   */
  lift(
    tenant: Tenant,
    subject: Subject,
    lift: { readonly at: string; readonly note: string; readonly baseline: DailyCounts },
  ): Promise<Standing | null>;
}
