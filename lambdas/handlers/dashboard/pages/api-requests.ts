// API requests: the account's recent requests made with its keys in this mode (GET /v1/logs), filtered by
// status, method, route, key and time with a form of selects (the filters are the API's, run server-side), paged
// with the filters kept; each row opens the request: its query, both bodies with secrets removed (as stored), and
// a 4xx's error message and field problems. The dashboard's own calls are not among them (a session is not a key).
import { LOGGED_METHODS, LOGGED_ROUTES } from '../../http/logs';
import { at, badge, dataTable, tokens } from '../components';
import { BASE, href, html } from '../http';
import { type DashboardRequest, ID, route } from '../routes';

interface RequestItem {
  id: string;
  method: string;
  path: string;
  route: string | null;
  status: number;
  api_key_id: string;
  request_id: string;
  duration_ms: number;
  user_agent: string | null;
  created_at: string;
}

interface RequestDetail extends RequestItem {
  query: string | null;
  request_body: unknown;
  response_body: unknown;
}

interface KeyItem {
  id: string;
  name: string;
  hint: string;
}

/** Rows on one page of the list. */
export const REQUESTS_PER_PAGE = 25;
const STATUSES = [
  ['2xx', '2xx (success)'],
  ['4xx', '4xx (client error)'],
  ['5xx', '5xx (server error)'],
  ...[
    '200',
    '201',
    '202',
    '204',
    '400',
    '401',
    '403',
    '404',
    '405',
    '409',
    '410',
    '413',
    '415',
    '422',
    '429',
    '500',
  ].map((code) => [code, code] as const),
] as const;
const RANGES = [
  ['15m', 'Last 15 minutes', 15 * 60_000],
  ['1h', 'Last hour', 3_600_000],
  ['6h', 'Last 6 hours', 6 * 3_600_000],
] as const;

/** The filters of the list's query string, only values the API takes (anything else is no filter). */
function filtersOf(query: Readonly<Record<string, string>>, keys: readonly KeyItem[]) {
  return {
    status: STATUSES.find(([value]) => value === query.status)?.[0],
    method: LOGGED_METHODS.find((m) => m === query.method),
    route: LOGGED_ROUTES.find((r) => r === query.route),
    key: keys.find((k) => k.id === query.key)?.id,
    range: RANGES.find(([value]) => value === query.range)?.[0],
  };
}

const select = (
  id: string,
  name: string,
  label: string,
  any: string,
  options: readonly (readonly [string, string])[],
  chosen: string | undefined,
) =>
  html`<div><label for="${id}">${label}</label><select id="${id}" name="${name}"><option value="">${any}</option>${options.map(
    ([value, text]) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${text}</option>`,
  )}</select></div>`;

async function list({ api, page, query, now }: DashboardRequest) {
  const { body: keys } = await api.get<{ data: KeyItem[] }>('/api-keys');
  const filters = filtersOf(query, keys.data);
  const range = RANGES.find(([value]) => value === filters.range);
  const after = /^req_[0-9a-z]{26}$/.test(query.after ?? '') ? query.after : undefined;
  const { body: log } = await api.get<{ data: RequestItem[]; next_after: string | null }>('/logs', {
    limit: String(REQUESTS_PER_PAGE),
    status: filters.status,
    method: filters.method,
    route: filters.route,
    api_key_id: filters.key,
    since: range ? new Date(now - range[2]).toISOString() : undefined,
    after,
  });
  const hints = new Map(keys.data.map((k) => [k.id, `${k.name} (${k.hint})`]));
  const form = html`<form method="get" action="${BASE}/api-requests" class="stack">
${select('log-status', 'status', 'Status', 'Any status', STATUSES, filters.status)}
${select(
  'log-method',
  'method',
  'Method',
  'Any method',
  LOGGED_METHODS.map((m) => [m, m] as const),
  filters.method,
)}
${select(
  'log-route',
  'route',
  'Route',
  'Any route',
  LOGGED_ROUTES.map((r) => [r, r] as const),
  filters.route,
)}
${select(
  'log-key',
  'key',
  'API key',
  'Any key',
  keys.data.map((k) => [k.id, hints.get(k.id) ?? k.id] as const),
  filters.key,
)}
${select(
  'log-range',
  'range',
  'Time',
  'Last 24 hours',
  RANGES.map(([value, text]) => [value, text] as const),
  filters.range,
)}
<div><button type="submit" class="secondary">Filter</button></div></form>`;
  const rows = log.data.length
    ? dataTable(
        'API requests, newest first',
        ['Time', 'Method', 'Path', 'Status', 'Key', 'Duration'],
        log.data.map((r) => [
          html`<a href="${BASE}/api-requests/${r.id}">${at(r.created_at)}</a>`,
          r.method,
          html`<span class="mono">${tokens(r.path)}</span>`,
          statusOf(r.status),
          html`<span class="mono">${hints.get(r.api_key_id) ?? r.api_key_id}</span>`,
          `${r.duration_ms} ms`,
        ]),
        { classes: [undefined, 'token'] },
      )
    : html`<p>No API requests in ${page.mode} mode match${log.next_after ? ' on this page' : ''}.</p>`;
  const partial =
    log.next_after && log.data.length < REQUESTS_PER_PAGE
      ? html`<p>This page searched part of the log: older requests may match.</p>`
      : '';
  const older = log.next_after
    ? html`<p><a href="${href('/api-requests', { ...filters, after: log.next_after })}">Older requests</a></p>`
    : '';
  const content = html`<p>Requests made with this account's ${page.mode} keys in the last 24 hours (also at
<code>GET /v1/logs</code>), newest first. Open one to see its query, its bodies with secrets removed, and a failed
request's error. Pages of this dashboard are not listed.</p>${form}${rows}${partial}${older}`;
  return { title: 'API requests', section: '/api-requests', content };
}

const statusOf = (status: number) => badge(String(status), status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok');

interface ErrorBody {
  error?: string;
  message?: string;
  code?: string;
  details?: { path?: string; message?: string }[];
}

const asError = (body: unknown): ErrorBody | null =>
  body && typeof body === 'object' && !Array.isArray(body) ? (body as ErrorBody) : null;

const shownBody = (body: unknown, label: string) =>
  body === null || body === undefined
    ? html`<p>No ${label.toLowerCase()}.</p>`
    : html`<pre class="mono" tabindex="0" aria-label="${label}">${typeof body === 'string' ? body : JSON.stringify(body, null, 2)}</pre>`;

async function detail({ api, params }: DashboardRequest) {
  const [id = ''] = params;
  const [{ body: r }, { body: keys }] = await Promise.all([
    api.get<RequestDetail>(`/logs/${id}`),
    api.get<{ data: KeyItem[] }>('/api-keys'),
  ]);
  const key = keys.data.find((k) => k.id === r.api_key_id);
  const failure = r.status >= 400 ? asError(r.response_body) : null;
  const problems = failure?.details?.length
    ? html`<h3>Field problems</h3><ul>${failure.details.map(
        (d) => html`<li><code>${d.path || '(the body)'}</code>: ${d.message ?? ''}</li>`,
      )}</ul>`
    : '';
  const error = failure
    ? html`<section aria-labelledby="error-heading"><h2 id="error-heading">Error</h2>
<p role="note"><strong>${r.status}</strong>${failure.code ? html` <code>${failure.code}</code>` : ''}: ${failure.error ?? failure.message ?? 'no message'}</p>${problems}</section>`
    : '';
  const content = html`<dl class="facts"><dt>Method</dt><dd class="token">${r.method}</dd><dt>Path</dt><dd class="mono">${tokens(r.path)}</dd>
<dt>Query</dt><dd class="mono">${r.query ?? '—'}</dd><dt>Route</dt><dd class="mono">${r.route ?? '—'}</dd>
<dt>Status</dt><dd>${statusOf(r.status)}</dd><dt>Duration</dt><dd>${r.duration_ms} ms</dd>
<dt>Key</dt><dd class="mono">${key ? `${key.name} (${key.hint})` : r.api_key_id}</dd><dt>Time</dt><dd>${at(r.created_at)}</dd>
<dt>Request id</dt><dd class="mono">${r.request_id}</dd><dt>User-Agent</dt><dd class="mono">${r.user_agent ?? '—'}</dd></dl>
${error}<section aria-labelledby="request-heading"><h2 id="request-heading">Request body</h2>${shownBody(r.request_body, 'Request body')}</section>
<section aria-labelledby="response-heading"><h2 id="response-heading">Response body</h2>${shownBody(r.response_body, 'Response body')}</section>
<p>Secrets are removed before a request is kept (keys, signing secrets, passwords, tokens), email bodies are cut and
attachment content dropped; long bodies are shortened. <a href="${BASE}/api-requests">All API requests</a></p>`;
  return { title: `${r.method} ${r.path} ${r.status}`, section: '/api-requests', content };
}

export const apiRequestRoutes = [route.get('api-requests', list), route.get(`api-requests/${ID}`, detail)];
