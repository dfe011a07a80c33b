// The event catalog (GET /v1/event-types): every event type a webhook can receive, what it means, and the JSON
// Schema of its payload as delivered, so a developer can write a receiver from the dashboard alone.
import { html } from '../http';
import { type DashboardRequest, route } from '../routes';

interface EventTypeItem {
  readonly type: string;
  readonly description: string;
  readonly schema: unknown;
}

async function catalog({ api }: DashboardRequest) {
  const { body } = await api.get<{ data: EventTypeItem[] }>('/event-types');
  return {
    title: 'Event types',
    section: '/webhooks',
    content: html`<p>Every event a webhook can subscribe to, with the JSON Schema (draft 2020-12) its payload validates
against. The same schemas are in the OpenAPI document's <code>webhooks</code> section.</p>
<div class="table-wrap" tabindex="0"><table><caption>Event types</caption>
<thead><tr><th scope="col">Type</th><th scope="col">Meaning and payload</th></tr></thead>
<tbody>${body.data.map(
      (t) => html`<tr><th scope="row" class="mono">${t.type}</th><td>${t.description}
<details><summary>Payload schema of ${t.type}</summary><pre class="mono">${JSON.stringify(t.schema, null, 2)}</pre></details></td></tr>`,
    )}</tbody></table></div>`,
  };
}

export const eventTypeRoutes = [route.get('event-types', catalog)];
