// Resend's names for Sendflow's webhook objects (docs/resend.md, "Webhooks, suppressions and logs"), pure: a
// webhook's `status` is its `active`, a delivery is a "webhook event" whose status and attempts use Resend's words.
// The spec's own fields stay; these are shown beside them.

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Resend's `status` of a webhook: `enabled` while active, `disabled` when paused or disabled by Sendflow. */
export function webhookStatus(active: boolean): WebhookStatus {
  return active ? 'enabled' : 'disabled';
}

/**
 * One `active` from the spec's `active` and Resend's `status`/`url` and `endpoint` pairs: either name alone, or
 * both when they agree; null when they disagree (the caller answers 422 naming both).
 */
export function oneOf<T>(spec: T | undefined, resend: T | undefined): { value: T | undefined } | null {
  if (spec !== undefined && resend !== undefined && spec !== resend) return null;
  return { value: spec ?? resend };
}

export const WEBHOOK_EVENT_STATUSES = ['success', 'pending', 'failed', 'attempting'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

/** What a delivery's status is read from: its state, and the claim of an attempt in flight. */
export interface DeliveryState {
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly claim?: { readonly until: number };
}

/**
 * A delivery's status in Resend's words: `success` (succeeded), `failed`, `attempting` (an attempt holds its
 * claim now), else `pending` (waiting for its next attempt).
 */
export function webhookEventStatus(delivery: DeliveryState, nowMs: number): WebhookEventStatus {
  if (delivery.status === 'succeeded') return 'success';
  if (delivery.status === 'failed') return 'failed';
  return delivery.claim && delivery.claim.until > nowMs ? 'attempting' : 'pending';
}

/** An attempt as Resend lists it. */
export interface WebhookEventAttempt {
  readonly id: string;
  /** 0 when the endpoint gave no HTTP answer. */
  readonly http_status_code: number;
  readonly response: string;
  readonly sent_at: string;
}

/** What an attempt view is made from: the delivery's log and its latest response excerpt. */
export interface AttemptSource {
  readonly id: string;
  readonly attemptLog: readonly {
    readonly at: number;
    readonly statusCode: number | null;
    readonly error: string | null;
  }[];
  /** First 500 characters of the latest attempt's response body. */
  readonly response: string;
}

/** An attempt's id: its delivery's id and its number (from 1), e.g. `dlv_…-2`. */
export const attemptId = (deliveryId: string, number: number) => `${deliveryId}-${number}`;

/** The attempt number an attempt id names within its delivery, or null when it is not one of its ids. */
export function attemptNumber(deliveryId: string, id: string): number | null {
  const prefix = `${deliveryId}-`;
  if (!id.startsWith(prefix)) return null;
  const rest = id.slice(prefix.length);
  return /^[1-9][0-9]{0,5}$/.test(rest) ? Number(rest) : null;
}

/**
 * A delivery's attempts, newest first. Only the latest attempt's response body is kept (its first 500
 * characters); an earlier one shows its error, or nothing.
 */
export function webhookEventAttempts(delivery: AttemptSource): WebhookEventAttempt[] {
  const last = delivery.attemptLog.length - 1;
  return delivery.attemptLog
    .map((entry, index) => ({
      id: attemptId(delivery.id, index + 1),
      http_status_code: entry.statusCode ?? 0,
      response: index === last && delivery.response !== '' ? delivery.response : (entry.error ?? ''),
      sent_at: new Date(entry.at).toISOString(),
    }))
    .reverse();
}

/** One page of `attempts` (newest first) after the attempt id `after`, at most `limit`. */
export function attemptPage(
  deliveryId: string,
  attempts: readonly WebhookEventAttempt[],
  limit: number,
  after?: string,
): { data: WebhookEventAttempt[]; hasMore: boolean } | null {
  let start = 0;
  if (after !== undefined) {
    const number = attemptNumber(deliveryId, after);
    if (number === null) return null;
    // Newest first: the attempts after number n are n-1, n-2, …
    start = attempts.findIndex((attempt) => attemptNumber(deliveryId, attempt.id) === number - 1);
    if (start < 0) start = attempts.length;
  }
  const data = attempts.slice(start, start + limit);
  return { data, hasMore: start + limit < attempts.length };
}
