// Use case: after each attempt, the endpoint's health bookkeeping (auto-disable, issue 18). Judged from the
// webhook the attempt was made with (the worker's cached copy): a success with no streak writes nothing; the
// first success after failures clears the streak; each failed delivery is counted until the minimum; a 410, or
// a streak past the window, disables the webhook, and a day-old streak earns one `webhook.failing`. Both events
// go to the account's other webhooks that subscribe to them, fanned out here as the dispatcher would.
import { newEvent } from '../../domain/events';
import {
  type AutoDisablePolicy,
  type DisabledReason,
  type FailureStreak,
  noteFor,
  redactedUrl,
  verdictFor,
} from '../../domain/webhooks/auto-disable';
import { type AttemptKind, type AttemptOutcome, isSuccess } from '../../domain/webhooks/delivery';
import { errorClassOf } from '../../domain/webhooks/error-class';
import type { Clock, RandomBytes } from '../ports';
import { dispatchEvent } from './dispatch-event';
import type { DeliveryQueue, Tenant, Webhook, WebhookHealthStore, WebhookRepository } from './ports';

export interface EndpointWatchDeps {
  readonly health: WebhookHealthStore;
  readonly webhooks: Pick<WebhookRepository, 'list'>;
  readonly deliveryQueue: DeliveryQueue;
  readonly clock: Clock;
  readonly random: RandomBytes;
  readonly autoDisable: AutoDisablePolicy;
  /** What this process last wrote of each streak (adapters/in-process/known-streaks); none when absent. */
  readonly known?: KnownStreaks;
  /** Told once of each webhook this disables, after its event (the account's notice, app/notices); none: nothing. */
  readonly disabled?: (webhook: Webhook, reason: DisabledReason) => Promise<void>;
}

/**
 * The streaks this process noted lately, by webhook: they outrank a stale cached webhook, so a burst of failures
 * stops writing once its streak has the minimum count. Kept for a bounded time: past it the webhook item rules.
 */
export interface KnownStreaks {
  get(key: string, nowMs: number): FailureStreak | undefined;
  set(key: string, streak: FailureStreak, nowMs: number): void;
  delete(key: string): void;
}

/** One recorded attempt that made a request, and the webhook it was made with. */
export interface SeenAttempt {
  readonly webhook: Webhook;
  readonly outcome: AttemptOutcome;
  readonly kind: AttemptKind;
  readonly attempt: number;
}

/** The streak a webhook item shows (nulls from a resume are none). */
export function streakOf(webhook: Webhook): FailureStreak | null {
  if (typeof webhook.failingSince !== 'number') return null;
  return {
    since: webhook.failingSince,
    failures: webhook.failedDeliveries ?? 0,
    failingNotified: typeof webhook.failingNotifiedAt === 'number',
  };
}

/**
 * watchEndpoint, best effort: the attempt is recorded already and its retry must still be scheduled, so a failed
 * bookkeeping write is reported to `onError` instead of thrown (the endpoint's next failure makes it again).
 */
export async function watchEndpointSafely(
  deps: EndpointWatchDeps,
  seen: SeenAttempt,
  onError: (error: unknown) => void,
): Promise<void> {
  try {
    await watchEndpoint(deps, seen);
  } catch (error) {
    onError(error);
  }
}

export async function watchEndpoint(deps: EndpointWatchDeps, seen: SeenAttempt): Promise<void> {
  const { webhook, outcome, kind } = seen;
  const ok = isSuccess(outcome);
  const automatic = kind === 'automatic';
  const key = `${webhook.accountId}#${webhook.mode}#${webhook.id}`;
  const cached = latest(streakOf(webhook), deps.known?.get(key, deps.clock.now()));
  const note = noteFor(
    { statusCode: outcome.statusCode, ok, automatic, first: seen.attempt === 1 },
    cached,
    deps.autoDisable,
  );
  if (note === 'clear') {
    deps.known?.delete(key);
    return deps.health.clearStreak(webhook, webhook.id);
  }
  if (note === 'gone') return disable(deps, seen, 'gone', cached);
  if (ok || !automatic) return;
  const streak =
    note === 'count' ? await deps.health.countFailure(webhook, webhook.id, outcome.at, cached !== null) : cached;
  const now = deps.clock.now();
  if (note === 'count' && streak) deps.known?.set(key, streak, now);
  const verdict = verdictFor(streak, now, deps.autoDisable);
  if (!streak || !verdict) return;
  if (verdict === 'disable') return disable(deps, seen, 'failing', streak);
  const noted = await deps.health.noteFailing(webhook, webhook.id, streak.since, now);
  // Noted here or elsewhere: either way this process need not try again while its copy of the webhook is stale.
  deps.known?.set(key, { ...streak, failingNotified: true }, now);
  if (noted) {
    await announce(deps, webhook, 'webhook.failing', {
      ...about(webhook, outcome),
      failing_since: new Date(streak.since).toISOString(),
      disable_at: new Date(streak.since + deps.autoDisable.disableAfterMs).toISOString(),
    });
  }
}

/**
 * The newer of the item's streak and the one this process noted: a later start wins (the other was cleared); the
 * same streak takes the higher count and either notice. With no streak on the item, the noted one stands (the item
 * was read before this process wrote; if a success cleared it since, the conditional writes find that out).
 */
function latest(item: FailureStreak | null, noted: FailureStreak | undefined): FailureStreak | null {
  if (!noted) return item;
  if (!item) return noted;
  if (item.since !== noted.since) return item.since > noted.since ? item : noted;
  return {
    since: item.since,
    failures: Math.max(item.failures, noted.failures),
    failingNotified: item.failingNotified || noted.failingNotified,
  };
}

async function disable(
  deps: EndpointWatchDeps,
  seen: SeenAttempt,
  reason: DisabledReason,
  streak: FailureStreak | null,
): Promise<void> {
  const { webhook, outcome } = seen;
  const at = deps.clock.now();
  // For `failing`, only while the streak that earned it stands (a success or a resume in between cancels it).
  const since = reason === 'failing' ? streak?.since : undefined;
  const disabled = await deps.health.disable(webhook, webhook.id, reason, at, since);
  if (!disabled) return;
  await announce(deps, webhook, 'webhook.disabled', {
    ...about(webhook, outcome),
    reason,
    disabled_at: disabled.disabledAt ?? new Date(at).toISOString(),
    failing_since: streak ? new Date(streak.since).toISOString() : null,
  });
  await deps.disabled?.(webhook, reason);
}

/** What both events say of the webhook and its last attempt. */
function about(webhook: Webhook, outcome: AttemptOutcome) {
  return {
    webhook_id: webhook.id,
    url: redactedUrl(webhook.url),
    last_error_class: errorClassOf(outcome),
    last_status_code: outcome.statusCode,
  };
}

/** Fans the event out to the tenant's other active webhooks that subscribe to it (never to its subject). */
async function announce(
  deps: EndpointWatchDeps,
  subject: Webhook,
  type: 'webhook.failing' | 'webhook.disabled',
  data: Readonly<Record<string, unknown>>,
): Promise<void> {
  const event = newEvent(
    { type, accountId: subject.accountId, mode: subject.mode, at: deps.clock.now(), data },
    deps.random,
  );
  const others = {
    list: async (tenant: Tenant) => (await deps.webhooks.list(tenant)).filter((w) => w.id !== subject.id),
  };
  await dispatchEvent({ webhooks: others, deliveryQueue: deps.deliveryQueue, clock: deps.clock }, event);
}
