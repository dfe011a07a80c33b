// States said as they are (issue 31): which deliveries count as failures (a pending one whose latest attempt
// failed is one, with a retry to come), where "Retry now" can start a retry (the API answers 409 while one is
// scheduled or running, and refuses a paused webhook), when an email happened (canceled, scheduled, or created),
// and an email's deliveries grouped by the event that caused them, with its recipient and time.
import { isSuccess } from '../../../domain/webhooks/delivery';
import { deliveryIdFor } from '../../../domain/webhooks/render';
import { BASE, html, type Safe } from '../http';
import { actionButton, when } from '../layout';
import { type DeliveryItem, deliveryStatus, failureText } from './views';

/** Whether a delivery's latest attempt failed (failed ones, and pending ones waiting for their retry). */
export function latestFailed(d: Pick<DeliveryItem, 'attempt_log'>): boolean {
  const latest = d.attempt_log.at(-1);
  return latest !== undefined && !isSuccess({ statusCode: latest.status_code || null, error: latest.error || null });
}

/** The failures worth showing: failed deliveries, and pending ones whose latest attempt failed. */
export const isFailure = (d: DeliveryItem) => d.status === 'failed' || (d.status === 'pending' && latestFailed(d));

/**
 * "Retry now" where the API can start a retry (a delivery failed or succeeded, of an active webhook); otherwise
 * why not, and what to do.
 */
export function retryControl(
  d: Pick<DeliveryItem, 'id' | 'webhook_id' | 'status' | 'attempts' | 'next_attempt_at'>,
  hook: { readonly active: boolean },
  csrf: string,
): Safe {
  if (d.status === 'pending') {
    const due = d.next_attempt_at ? html` for ${when(d.next_attempt_at)}` : '';
    const what = d.attempts > 0 ? 'A retry is scheduled' : 'The first attempt is scheduled';
    return html`<p id="retry-state">${what}${due}: a retry by hand is possible once it has ended, so a delivery is never sent twice at once.</p>`;
  }
  if (!hook.active) return html`<p id="retry-state">Resume the webhook to retry this delivery.</p>`;
  return actionButton(`/webhooks/${d.webhook_id}/deliveries/${d.id}/retry`, 'Retry now', csrf, '');
}

/** An email's time as its list shows it: when it was canceled, when it is scheduled for, or when it was created. */
export function emailTime(e: {
  readonly status: string;
  readonly created_at: string;
  readonly scheduled_at?: string | null;
  readonly canceled_at?: string | null;
}): string {
  if (e.status === 'canceled' && e.canceled_at) return `Canceled ${when(e.canceled_at)}`;
  if (e.status === 'scheduled' && e.scheduled_at) return `Scheduled for ${when(e.scheduled_at)}`;
  return when(e.created_at);
}

interface EmailEvent {
  readonly id: string;
  readonly type: string;
  readonly to: string | null;
  readonly timestamp: string;
}

/**
 * An email's deliveries grouped by their event (oldest event first), each group headed by the event, its recipient
 * and time; a delivery's event is found from its id (derived from the event and the webhook). Deliveries of events
 * the email's history left out (its newest only) come last, under "Earlier events".
 */
export function deliveriesByEvent(
  deliveries: readonly DeliveryItem[],
  events: readonly EmailEvent[],
  endpoints: ReadonlyMap<string, string>,
): Safe {
  if (!deliveries.length) return html`<p>No webhook deliveries.</p>`;
  const byId = new Map(deliveries.map((d) => [d.id, d]));
  const placed = new Set<string>();
  const groups: { heading: Safe; rows: DeliveryItem[] }[] = [];
  for (const event of [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp))) {
    const rows = [...endpoints.keys()]
      .map((webhookId) => byId.get(deliveryIdFor(event.id, webhookId)))
      .filter((d): d is DeliveryItem => d !== undefined);
    for (const d of rows) placed.add(d.id);
    if (rows.length) {
      const to = event.to ? html` to <span class="mono">${event.to}</span>` : '';
      groups.push({ heading: html`${event.type}${to} at ${when(event.timestamp)}`, rows });
    }
  }
  const rest = deliveries.filter((d) => !placed.has(d.id));
  if (rest.length) groups.push({ heading: html`Earlier events`, rows: rest });
  return html`<div class="table-wrap" tabindex="0"><table><caption>Webhook deliveries of this email, by event</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Result</th></tr></thead>
${groups.map(
  (g) =>
    html`<tbody><tr><th scope="rowgroup" colspan="3">${g.heading}</th></tr>${g.rows.map(
      (
        d,
      ) => html`<tr><td class="url"><a href="${BASE}/webhooks/${d.webhook_id}/deliveries/${d.id}">${endpoints.get(d.webhook_id) ?? d.webhook_id}</a></td>
<td>${deliveryStatus(d.status)}</td><td>${failureText(d)}</td></tr>`,
    )}</tbody>`,
)}</table></div>`;
}
