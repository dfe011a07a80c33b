// The API's JSON shapes as the dashboard reads them (the fields it shows), and small shared renderings.
import { statusBadge } from '../components';
import { html, type Safe } from '../http';

export interface WebhookItem {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  format?: string;
  description?: string | null;
  updated_at?: string;
  /** Health, as the API computes it from the newest 100 deliveries (docs/webhooks.md, "Endpoint health and auto-disable"). */
  health: 'healthy' | 'failing' | 'quiet' | 'disabled';
  success_rate_24h: number | null;
  last_failure_at: string | null;
  disabled_reason: 'failing' | 'gone' | null;
  disabled_at: string | null;
  /** On one webhook (GET /v1/webhooks/:id), not in the list. */
  ordering?: 'none' | 'per_email';
  rate_limit_per_second?: number | null;
  /** On one webhook: its payload filter (null without one) and the events it kept back in 24 h. */
  filter?: Record<string, unknown> | null;
  filtered_24h?: number;
  /** Where events go: `http`, or an AWS destination with the account's external id and the policies to attach. */
  destination?: {
    type: 'http' | 'aws_eventbridge' | 'aws_sqs';
    event_bus_arn?: string;
    queue_url?: string;
    role_arn?: string;
    external_id?: string;
    trust_policy?: Record<string, unknown>;
    role_policy?: Record<string, unknown>;
  };
  /** On one webhook: its transformation's source (null without one). */
  transformation?: string | null;
}

export interface AttemptItem {
  at: string;
  status_code: number;
  duration_ms: number;
  error: string;
  error_class?: string | null;
  kind?: 'automatic' | 'manual' | 'test' | null;
  request_headers?: Record<string, string> | null;
  response_headers?: Record<string, string> | null;
  /** Seconds the endpoint asked to wait (Retry-After); null when it did not ask. */
  retry_after_seconds?: number | null;
  /** AWS destinations: AWS's error code and the answer's request id. */
  aws_error_code?: string | null;
  aws_request_id?: string | null;
}

export interface DeliveryItem {
  id: string;
  webhook_id: string;
  event: string;
  status: string;
  attempts: number;
  max_attempts: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  attempt_log: AttemptItem[];
  next_attempt_at: string | null;
  created_at: string;
  payload?: string;
  response?: string;
}

export interface RecoveryItem {
  id: string;
  status: string;
  since: string;
  until: string;
  delivery_status: string | null;
  total: number;
  attempted: number;
  succeeded: number;
  failed: number;
  skipped: number;
  created_at: string;
  updated_at: string;
}

/** A delivery's status as a badge (colour and word). */
export function deliveryStatus(status: string): Safe {
  return statusBadge(status);
}

/** Checkbox values of a form field, e.g. the events picked. */
export const checked = (form: URLSearchParams, name: string) => form.getAll(name).filter(Boolean);

/**
 * How many attempts, and of which kind, in words that stay true after manual retries (never "6 of 5"): the
 * automatic ones against the schedule's maximum, then the manual ones.
 */
export function attemptsText(d: Pick<DeliveryItem, 'attempts' | 'max_attempts' | 'attempt_log'>): string {
  const manual = d.attempt_log.filter((a) => a.kind === 'manual').length;
  const tests = d.attempt_log.filter((a) => a.kind === 'test').length;
  const automatic = d.attempts - manual - tests;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (tests && !automatic && !manual) return plural(tests, 'test send');
  if (manual === 0) return `${plural(d.attempts, 'attempt')} (at most ${d.max_attempts} scheduled)`;
  return `${plural(d.attempts, 'attempt')} (${automatic} scheduled + ${manual} manual)`;
}

/** Why the latest attempt failed, in a few words: its class, or its HTTP status. */
export function failureText(d: Pick<DeliveryItem, 'status_code' | 'attempt_log'>): string {
  const latest = d.attempt_log.at(-1);
  if (!latest) return '—';
  if (latest.status_code) return String(latest.status_code);
  return latest.error_class ? latest.error_class.replaceAll('_', ' ') : 'no answer';
}

/** A set of headers as a definition list (names in monospace). */
export function headerList(headers: Record<string, string> | null | undefined, label: string): Safe {
  const entries = Object.entries(headers ?? {});
  if (!entries.length) return html`<p>${label}: none recorded.</p>`;
  return html`<dl class="headers" aria-label="${label}">${entries.map(
    ([name, value]) => html`<dt class="mono">${name}</dt><dd class="mono">${value}</dd>`,
  )}</dl>`;
}

/** A quota and the usage of `GET /v1/usage`, as the overview and settings pages show them. */
export interface QuotaView {
  period: string;
  used: number;
  limit: number;
  resets_at: string;
}

export interface UsageView {
  plan: string;
  rate_limit: { requests_per_second: number };
  live_emails_this_month: QuotaView;
  test_recipients_today: QuotaView;
}
