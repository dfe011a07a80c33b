// The event catalog (GET /v1/event-types): every event type a webhook can receive, what it means, and the JSON
// Schema of its payload as delivered, so a developer can write a receiver from the dashboard alone.
import { dataTable } from '../components';
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
    back: ['/webhooks', 'Webhooks'] as const,
    content: html`<section aria-labelledby="types-h"><h2 id="types-h" class="visually-hidden">Event types</h2><p>Every event a webhook can subscribe to, with the JSON Schema (draft 2020-12) its payload validates
against. The same schemas are in the OpenAPI document's <code>webhooks</code> section.</p>
${dataTable(
  'Event types',
  ['Type', 'Meaning and payload'],
  body.data.map((t) => [
    html`<span class="mono">${t.type}</span>`,
    html`${t.description}
<details><summary>Payload schema of ${t.type}</summary><pre class="code" tabindex="0">${JSON.stringify(t.schema, null, 2)}</pre></details>`,
  ]),
  { hiddenCaption: true, rowHeaders: true },
)}</section>`,
  };
}

export const eventTypeRoutes = [route.get('event-types', catalog)];
