// API requests: the account's recent requests made with its keys in this mode (GET /v1/logs): time, method,
// path, status, the key's hint. The dashboard's own calls are not among them (a session is not a key).
import { at, badge, dataTable, tokens } from '../components';
import { html } from '../http';
import { type DashboardRequest, route } from '../routes';

interface RequestItem {
  id: string;
  method: string;
  path: string;
  status: number;
  api_key_id: string;
  request_id: string;
  duration_ms: number;
  created_at: string;
}

async function list({ api, page }: DashboardRequest) {
  const [{ body: log }, { body: keys }] = await Promise.all([
    api.get<{ data: RequestItem[] }>('/logs'),
    api.get<{ data: { id: string; name: string; hint: string }[] }>('/api-keys'),
  ]);
  const hints = new Map(keys.data.map((k) => [k.id, `${k.name} (${k.hint})`]));
  const rows = log.data.length
    ? dataTable(
        'API requests, newest first',
        ['Time', 'Method', 'Path', 'Status', 'Key', 'Duration'],
        log.data.map((r) => [
          at(r.created_at),
          r.method,
          html`<span class="mono">${tokens(r.path)}</span>`,
          badge(String(r.status), r.status >= 500 ? 'bad' : r.status >= 400 ? 'warn' : 'ok'),
          html`<span class="mono">${hints.get(r.api_key_id) ?? r.api_key_id}</span>`,
          `${r.duration_ms} ms`,
        ]),
        { classes: [undefined, 'token'] },
      )
    : html`<p>No API requests in ${page.mode} mode in the last 24 hours.</p>`;
  const content = html`<section aria-labelledby="requests-h"><h2 id="requests-h" class="visually-hidden">Requests</h2><p>The newest 100 requests made with this account's ${page.mode} keys in the last 24 hours.
Only method, path, status, key and time are kept: never headers or bodies. Pages of this dashboard are not listed.</p>${rows}</section>`;
  return { title: 'API requests', section: '/api-requests', content };
}

export const apiRequestRoutes = [route.get('api-requests', list)];
