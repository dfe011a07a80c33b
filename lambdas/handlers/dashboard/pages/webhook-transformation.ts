// A webhook's transformation in the dashboard (docs/webhooks.md, "Transformations"): its JavaScript in a textarea
// of the edit form on the Settings tab, read back from the form, and "Simulate", which runs the typed code (not
// saved) on the webhook's newest delivery through POST /v1/webhooks/:id/transformation/simulate. The API alone
// judges the code: a 422 on save is shown next to the field, a simulated failure in the banner.

import { BASE, html, type Safe } from '../http';
import { fieldError, invalidAttrs, type PageContext } from '../layout';
import type { DashboardRequest } from '../routes';
import type { DeliveryItem } from './views';

const PLACEHOLDER = `function handler(webhook) {
  webhook.payload = { text: webhook.eventType };
  return webhook;
}`;

/** The textarea, prefilled with `draft` (code just simulated, not saved) or the webhook's own transformation. */
export function transformationField(
  page: PageContext,
  id: string,
  hook: { readonly transformation?: string | null },
  draft: string | undefined,
): Safe {
  const text = draft ?? hook.transformation ?? '';
  return html`<label for="edit-transformation">Transformation (JavaScript, optional)</label>
<textarea id="edit-transformation" name="transformation" rows="10" class="mono" spellcheck="false" placeholder="${PLACEHOLDER}"${invalidAttrs(page, 'transformation', 'edit-transformation')}>${text}</textarea>
${fieldError(page, 'transformation', 'edit-transformation')}<p id="edit-transformation-hint" class="hint">function handler(webhook) gets {eventType, payload, url, method, headers} and returns it changed, or sets cancel = true. Runs in a sandbox (50 ms of CPU, 16 MB, no network); the signature covers the new body. Empty: none.${draft === undefined ? '' : ' Simulated, not saved yet.'}</p>
<div><button type="submit" class="secondary" formaction="${BASE}/webhooks/${id}/transformation-simulate">Simulate on the newest delivery</button></div>`;
}

/** The transformation as the API takes it: empty is null (none). */
export function transformationFromForm(form: URLSearchParams): { transformation?: string | null } {
  if (!form.has('transformation')) return {};
  const text = form.get('transformation') ?? '';
  return { transformation: text.trim() === '' ? null : text };
}

interface Simulation {
  outcome: 'request' | 'canceled' | 'error';
  request: { url: string; method: string; body: string } | null;
  error: string | null;
}

/** "Simulate": the typed code on the newest delivery's payload; the outcome in the banner, the code kept in the form. */
export async function simulateTransformationAction({ api, params, form }: DashboardRequest) {
  const [id = ''] = params;
  const code = form.get('transformation') ?? '';
  const back = `/webhooks/${id}/settings?${new URLSearchParams({ transformation_draft: code })}#edit-h`;
  if (code.trim() === '')
    return { to: back, flash: { kind: 'error' as const, text: 'Type a transformation to simulate.' } };
  const { body: log } = await api.get<{ data: DeliveryItem[] }>(`/webhooks/${id}/deliveries`, { limit: '1' });
  const newest = log.data[0];
  if (!newest) return { to: back, flash: { kind: 'error' as const, text: 'No delivery yet to simulate on.' } };
  const { body: delivery } = await api.get<DeliveryItem>(`/webhooks/${id}/deliveries/${newest.id}`);
  let payload: unknown;
  try {
    payload = JSON.parse(delivery.payload ?? 'null');
  } catch {
    payload = delivery.payload ?? null;
  }
  const { body } = await api.send<Simulation>('POST', `/webhooks/${id}/transformation/simulate`, {
    event_type: delivery.event,
    payload,
    transformation: code,
  });
  const about = `${delivery.event} of ${delivery.created_at}`;
  if (body.outcome === 'error')
    return { to: back, flash: { kind: 'error' as const, text: `Simulated on ${about}: ${body.error}` } };
  if (body.outcome === 'canceled')
    return { to: back, flash: { kind: 'notice' as const, text: `Simulated on ${about}: canceled (no request).` } };
  const request = body.request;
  const excerpt = (request?.body ?? '').slice(0, 300);
  return {
    to: back,
    flash: {
      kind: 'notice' as const,
      text: `Simulated on ${about}: ${request?.method} ${request?.url} with ${excerpt}${(request?.body.length ?? 0) > 300 ? '…' : ''}`,
    },
  };
}
