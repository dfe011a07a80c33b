// API requests: the account's recent requests made with its keys in this mode (GET /v1/logs): time, method,
// path, status, the key's hint. The dashboard's own calls are not among them (a session is not a key).
import { html } from '../http';
import { when } from '../layout';
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
    ? html`<div class="table-wrap" tabindex="0"><table><caption>API requests, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th><th scope="col">Key</th><th scope="col">Duration</th></tr></thead>
<tbody>${log.data.map(
        (
          r,
        ) => html`<tr><td>${when(r.created_at)}</td><td class="token">${r.method}</td><td class="mono url">${r.path}</td>
<td class="${r.status >= 400 ? 'status-failed' : 'status-succeeded'}">${r.status}</td><td class="mono">${hints.get(r.api_key_id) ?? r.api_key_id}</td><td>${r.duration_ms} ms</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No API requests in ${page.mode} mode in the last 24 hours.</p>`;
  const content = html`<p>The newest 100 requests made with this account's ${page.mode} keys in the last 24 hours
(also at <code>GET /v1/logs</code>). Only method, path, status, key and time are kept: never headers or bodies.
Pages of this dashboard are not listed.</p>${rows}`;
  return { title: 'API requests', section: '/api-requests', content };
}

export const apiRequestRoutes = [route.get('api-requests', list)];
