// A webhook's health as the API gives it (health, success_rate_24h, last_failure_at, disabled_reason,
// disabled_at), rendered: the state badge, the figures, and why Sendflow disabled it. Nothing is recomputed here.
import { isSuccess } from '../../../domain/webhooks/delivery';
import { at, badge } from '../components';
import { BASE, html, type Safe } from '../http';
import { actionButton, when } from '../layout';
import type { AttemptItem, DeliveryItem, WebhookItem } from './views';

type Health = Pick<WebhookItem, 'active' | 'health' | 'disabled_reason'>;

const HEALTH_LABELS = {
  healthy: 'Healthy',
  failing: 'Failing',
  quiet: 'No recent deliveries',
  disabled: 'Disabled',
} as const;
const HEALTH_TONES = { healthy: 'ok', failing: 'bad', quiet: 'neutral', disabled: 'bad' } as const;

/** Why Sendflow disabled a webhook, in a few words (the list) and in full (its page). */
const REASONS = {
  failing: {
    short: 'failing for days',
    long:
      'it was failing for days: no delivery succeeded for the disable window (5 days unless the deployment ' +
      'says otherwise) and at least 10 failed',
  },
  gone: {
    short: 'endpoint answered 410 Gone',
    long: 'the endpoint answered 410 Gone, which asks for no more requests',
  },
} as const;

/** Disabled (by Sendflow) wins, then Paused (by its owner), then the API's health: never "Active" when failing. */
export function stateBadge(hook: Health): Safe {
  if (hook.disabled_reason)
    return html`${badge('Disabled', 'bad', 'health health-disabled')}: ${REASONS[hook.disabled_reason].short}`;
  if (!hook.active) return badge('Paused', 'neutral', 'health');
  return badge(HEALTH_LABELS[hook.health], HEALTH_TONES[hook.health], `health health-${hook.health}`);
}

/** "83%", or a dash without an attempt in the last 24 h. */
export function successRateText(hook: Pick<WebhookItem, 'success_rate_24h'>): string {
  return hook.success_rate_24h === null ? '—' : `${Math.round(hook.success_rate_24h * 100)}%`;
}

/** The last failure's time: in full (a webhook's facts), or compact (a table's cell). */
export function lastFailureText(hook: Pick<WebhookItem, 'last_failure_at'>, compact = false): Safe | string {
  if (!hook.last_failure_at) return 'none';
  return compact ? at(hook.last_failure_at) : when(hook.last_failure_at);
}

/** The newest failed attempt among deliveries the page already read (the log's newest page). */
function newestFailure(deliveries: readonly DeliveryItem[]): AttemptItem | null {
  const failed = deliveries
    .flatMap((d) => d.attempt_log)
    .filter((a) => !isSuccess({ statusCode: a.status_code || null, error: a.error || null }));
  return failed.sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0] ?? null;
}

function attemptError(attempt: AttemptItem | null): string {
  if (!attempt) return 'not among the newest deliveries: see the delivery log';
  const answer = attempt.status_code ? `HTTP ${attempt.status_code}` : 'no answer';
  const detail = attempt.error && attempt.error !== answer ? `, ${attempt.error}` : '';
  const kind = attempt.error_class ? ` (${attempt.error_class.replaceAll('_', ' ')})` : '';
  return `${answer}${detail}${kind} at ${when(attempt.at)}`;
}

/** A disabled webhook's explanation: why, when, the last error, Resume, and what a recovery job replays. */
export function disabledSection(
  hook: Pick<WebhookItem, 'id' | 'disabled_reason' | 'disabled_at'>,
  newest: readonly DeliveryItem[],
  csrf: string,
): Safe | '' {
  if (!hook.disabled_reason) return '';
  return html`<section aria-labelledby="disabled-h" class="disabled"><h2 id="disabled-h">Disabled by Sendflow</h2>
<p>Sendflow stopped sending to this endpoint at ${when(hook.disabled_at)}: ${REASONS[hook.disabled_reason].long}.</p>
<p>Last error: ${attemptError(newestFailure(newest))}.</p>
<p>Retries that were pending are kept, not lost. Once the endpoint answers again, resume it: the reason goes away and
deliveries start again. What failed meanwhile can be replayed with a recovery job (the <a href="${BASE}/webhooks/${hook.id}/recovery">Recovery</a> tab,
from before ${when(hook.disabled_at)}, failed ones only).</p>
<div class="actions">${actionButton(`/webhooks/${hook.id}/resume`, 'Resume', csrf, '')}</div></section>`;
}
