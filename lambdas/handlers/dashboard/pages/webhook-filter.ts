// A webhook's payload filter in the dashboard (docs/webhooks.md, "Filters"): the JSON in a textarea of the edit
// form, read back from a form, and "Test filter", which tries the typed filter on the webhook's newest delivery
// through POST /v1/webhooks/filter-test (the API alone judges a filter: its 422 is shown as is).
import { BASE, html, type Safe } from '../http';
import type { DashboardRequest } from '../routes';
import type { DeliveryItem } from './views';

/** The textarea, prefilled with `draft` (a filter just tested, not saved) or the webhook's own filter. */
export function filterField(
  id: string,
  hook: { readonly filter?: unknown; readonly filtered_24h?: number },
  draft: string | undefined,
): Safe {
  const text = draft ?? (hook.filter ? JSON.stringify(hook.filter, null, 2) : '');
  const kept = hook.filter ? ` Kept back in the last 24 hours: ${hook.filtered_24h ?? 0}.` : '';
  return html`<label for="edit-filter">Filter (JSON, optional)</label>
<textarea id="edit-filter" name="filter" rows="6" class="mono" spellcheck="false" aria-describedby="edit-filter-hint" placeholder='{"data": {"to": "ops@example.com"}, "tags": {"plan": "pro"}}'>${text}</textarea>
<p id="edit-filter-hint" class="hint">Only subscribed events it matches are delivered (Hookdeck Outpost's syntax: docs/webhooks.md, "Filters"); empty: every one.${kept}${draft === undefined ? '' : ' Tested, not saved yet.'}</p>
<div><button type="submit" class="secondary" formaction="${BASE}/webhooks/${id}/filter-test">Test filter on the newest delivery</button></div>`;
}

/** The filter as the API takes it: empty is null (none); text that is no JSON goes as typed, so the API's 422 names it. */
export function filterFromForm(form: URLSearchParams): { filter?: unknown } {
  if (!form.has('filter')) return {};
  const text = form.get('filter')?.trim() ?? '';
  if (text === '') return { filter: null };
  try {
    return { filter: JSON.parse(text) as unknown };
  } catch {
    return { filter: text };
  }
}

/**
 * "Test filter": the typed filter on the webhook's newest delivery (its payload, with its email's tags), answered
 * with the verdict and the typed filter kept in the form.
 */
export async function testFilterAction({ api, params, form }: DashboardRequest) {
  const [id = ''] = params;
  const text = form.get('filter') ?? '';
  const back = `/webhooks/${id}/settings?${new URLSearchParams({ filter_draft: text })}#edit-h`;
  const { body: log } = await api.get<{ data: DeliveryItem[] }>(`/webhooks/${id}/deliveries`, { limit: '1' });
  const newest = log.data[0];
  if (!newest) return { to: back, flash: { kind: 'error' as const, text: 'No delivery yet to test the filter on.' } };
  const { body: delivery } = await api.get<DeliveryItem>(`/webhooks/${id}/deliveries/${newest.id}`);
  const event = parsed(delivery.payload);
  if (!event)
    return {
      to: back,
      flash: { kind: 'error' as const, text: 'The newest delivery is a chat message: test with the API.' },
    };
  const tags = typeof event.email_id === 'string' ? await emailTags(api, event.email_id) : undefined;
  const { body } = await api.send<{ matches: boolean; reason: string | null }>('POST', '/webhooks/filter-test', {
    filter: filterFromForm(form).filter ?? null,
    event: { ...event, ...(tags ? { tags } : {}) },
  });
  const about = `${delivery.event} of ${delivery.created_at}`;
  return {
    to: back,
    flash: body.matches
      ? { kind: 'notice' as const, text: `Filter test on ${about}: it matches (it would be delivered).` }
      : { kind: 'error' as const, text: `Filter test on ${about}: no match (not delivered): ${body.reason}` },
  };
}

function parsed(payload: string | undefined): Record<string, unknown> | null {
  try {
    const value = JSON.parse(payload ?? '') as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) && 'type' in value
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The email's tags as a filter sees them; none when the email is gone (expired) or has none. */
async function emailTags(api: DashboardRequest['api'], emailId: string): Promise<Record<string, string> | undefined> {
  try {
    const { body } = await api.get<{ tags?: { name: string; value: string }[] }>(`/emails/${emailId}`);
    if (!body.tags?.length) return undefined;
    return Object.fromEntries(body.tags.map((t) => [t.name, t.value]));
  } catch {
    return undefined;
  }
}
