// Webhooks: the list and the create form; one webhook (settings, test send, pause/resume, rotate, delete, the
// delivery log with its status filter and paging, recovery jobs); one delivery (attempt timeline, exact payload,
// retry, with a 409 explained).
import { EVENT_TYPES } from '../../../domain/events';
import { FORMATS } from '../../../domain/webhooks/format';
import { ApiCallError } from '../api-client';
import { BASE, href, html, type Safe } from '../http';
import { actionButton, confirmForm, dangerLink, fieldError, isConfirmed, postForm, textField, when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';
import { retryControl } from './delivery-states';
import { deliveryHealthSection, successSparklines, windowOf } from './health-figures';
import {
  attemptsText,
  checked,
  type DeliveryItem,
  deliveryStatus,
  failureText,
  headerList,
  type RecoveryItem,
  type WebhookItem,
} from './views';
import { disabledSection, lastFailureText, stateBadge, successRateText } from './webhook-health';
import { optionFacts, optionFields, optionsFromForm } from './webhook-options';

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
/** Grace periods offered when rotating (seconds); the API allows any up to its maximum. */
const GRACE_PERIODS = [
  [0, 'None: the old secret stops at once'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
] as const;

function eventPicker(selected: readonly string[], legend: string): Safe {
  return html`<fieldset><legend>${legend}</legend>${EVENT_TYPES.map(
    (type) =>
      html`<label><input type="checkbox" name="events" value="${type}"${selected.includes(type) ? html` checked` : ''}> ${type}</label>`,
  )}</fieldset>`;
}

async function list({ api, page }: DashboardRequest) {
  // Health comes with the list (the API reads each webhook's newest deliveries once): no read of our own.
  // The success-rate trends: one more call for the whole list (the hourly figures: pages/health-figures).
  const [{ body }, trends] = await Promise.all([api.get<{ data: WebhookItem[] }>('/webhooks'), successSparklines(api)]);
  const rows = body.data.length
    ? html`<div class="table-wrap" tabindex="0"><table><caption>Webhook endpoints</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col">Success (24 h)</th><th scope="col">Trend (24 h)</th><th scope="col">Last failure</th><th scope="col">Events</th></tr></thead>
<tbody>${body.data.map(
        (w) => html`<tr><td class="url"><a href="${BASE}/webhooks/${w.id}">${w.url}</a></td><td>${stateBadge(w)}</td>
<td>${successRateText(w)}</td><td>${trends.get(w.id) ?? '—'}</td><td>${lastFailureText(w)}</td><td>${w.events.join(', ')}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No webhooks in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/webhooks',
    html`${textField(page, { id: 'wh-url', name: 'url', label: 'Endpoint URL', type: 'url', attrs: html` required placeholder="https://example.com/webhooks/sendflow"` })}
${eventPicker(['email.delivered', 'email.bounced'], 'Events to send')}${fieldError(page, 'events', 'wh-events')}
<label for="wh-format">Format</label><select id="wh-format" name="format"><option value="">Detect from the URL</option>${FORMATS.map(
      (f) => html`<option value="${f}">${f}</option>`,
    )}</select>
${textField(page, { id: 'wh-description', name: 'description', label: 'Description (optional)', attrs: html` maxlength="500"` })}
${optionFields('wh', null)}
<div><button type="submit">Create webhook</button></div>`,
    page.csrf,
    'stack',
  );
  return {
    title: 'Webhooks',
    section: '/webhooks',
    content: html`${rows}<p><a href="${BASE}/event-types">Event types</a>: what each event means, and the schema of its payload.</p>
<section aria-labelledby="new-h"><h2 id="new-h">New webhook</h2>${form}</section>
<section aria-labelledby="listen-h"><h2 id="listen-h">Test on your laptop</h2>
<p>No public URL needed: <code>SENDFLOW_API_KEY=sf_${page.mode}_… npm run listen -- --forward-to http://127.0.0.1:4000/webhooks</code>
forwards this mode's events to your machine, signed with the secret it prints (docs/webhooks.md, "Listen on your laptop").</p></section>`,
  };
}

async function create({ api, form }: DashboardRequest) {
  const { body } = await api.send<WebhookItem & { signing_secret: string }>('POST', '/webhooks', {
    url: form.get('url') ?? '',
    events: checked(form, 'events'),
    ...(form.get('format') ? { format: form.get('format') } : {}),
    ...(form.get('description') ? { description: form.get('description') } : {}),
    ...optionsFromForm(form, 'create'),
  });
  return {
    to: `/webhooks/${body.id}`,
    flash: {
      kind: 'notice' as const,
      text: `Webhook created for ${body.url}.`,
      secret: { label: 'Signing secret', value: body.signing_secret },
    },
  };
}

async function detail({ api, page, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const status = DELIVERY_STATUSES.find((s) => s === query.status);
  const after = query.after;
  const filtered = Boolean(status || after);
  // Health comes with the webhook; the log is one page of 20, filtered or not.
  const [{ body: hook }, { body: jobs }, { body: log }, health] = await Promise.all([
    api.get<WebhookItem>(`/webhooks/${id}`),
    api.get<{ data: RecoveryItem[] }>(`/webhooks/${id}/recoveries`),
    api.get<{ data: DeliveryItem[]; has_more: boolean }>(`/webhooks/${id}/deliveries`, { limit: '20', status, after }),
    deliveryHealthSection(api, { path: `/webhooks/${id}`, window: windowOf(query), webhookId: id }),
  ]);
  const { csrf } = page;
  // A disabled webhook's Resume is in its explanation; the button here pauses or resumes one its owner paused.
  const toggle = hook.disabled_reason
    ? ''
    : actionButton(`/webhooks/${id}/${hook.active ? 'pause' : 'resume'}`, hook.active ? 'Pause' : 'Resume', csrf);
  const facts = html`<dl class="facts"><dt>URL</dt><dd class="mono">${hook.url}</dd><dt>Events</dt><dd>${hook.events.join(', ')}</dd>
<dt>Format</dt><dd>${hook.format ?? 'standard'}</dd><dt>Description</dt><dd>${hook.description || '—'}</dd>
${optionFacts(hook)}
<dt>State</dt><dd>${stateBadge(hook)}</dd><dt>Success (24 h)</dt><dd>${successRateText(hook)}</dd>
<dt>Last failure</dt><dd>${lastFailureText(hook)}</dd><dt>Created</dt><dd>${when(hook.created_at)}</dd></dl>
${disabledSection(hook, filtered ? [] : log.data, csrf)}
<div class="actions">${actionButton(`/webhooks/${id}/test`, 'Send test event', csrf, '')}
${toggle}</div>`;
  const edit = postForm(
    `/webhooks/${id}`,
    html`<label for="edit-url">Endpoint URL</label><input id="edit-url" name="url" type="url" required value="${hook.url}">
${eventPicker(hook.events, 'Events')}
${optionFields('edit', hook)}<div><button type="submit">Save changes</button></div>`,
    csrf,
    'stack',
  );
  const rotate = postForm(
    `/webhooks/${id}/rotate`,
    html`<label for="grace">Keep the previous secret signing for</label><select id="grace" name="grace_period_seconds">${GRACE_PERIODS.map(
      ([seconds, label]) =>
        html`<option value="${seconds}"${seconds === 86_400 ? html` selected` : ''}>${label}</option>`,
    )}</select><div><button type="submit" class="secondary">Rotate signing secret</button></div>`,
    csrf,
    'stack',
  );
  const filter = html`<form method="get" action="${BASE}/webhooks/${id}" class="actions"><label for="status-filter">Status</label>
<select id="status-filter" name="status"><option value="">All</option>${DELIVERY_STATUSES.map(
    (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
  )}</select><button type="submit" class="secondary">Filter</button></form>`;
  const rows = log.data.length
    ? html`<div class="table-wrap" tabindex="0"><table><caption>Deliveries${status ? ` (${status})` : ''}</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Result</th></tr></thead>
<tbody>${log.data.map(
        (
          d,
        ) => html`<tr><td><a href="${BASE}/webhooks/${id}/deliveries/${d.id}">${when(d.created_at)}</a></td><td>${d.event}</td>
<td>${deliveryStatus(d.status)}</td><td>${d.attempts}</td><td>${failureText(d)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No deliveries${status ? ` with status ${status}` : ''}.</p>`;
  const older =
    log.has_more && log.data.length
      ? html`<p><a href="${href(`/webhooks/${id}`, { status, after: log.data.at(-1)?.id })}">Older deliveries</a></p>`
      : '';
  const newest = after ? html`<p><a href="${href(`/webhooks/${id}`, { status })}">Newest deliveries</a></p>` : '';
  const recovery = postForm(
    `/webhooks/${id}/recoveries`,
    html`<p>Replays every delivery of a window once, in the background (docs/webhooks.md, "Recovery jobs").</p>
<label for="rec-since">From (UTC)</label><input id="rec-since" name="since" type="datetime-local" required step="1">
<label for="rec-until">Until (UTC, optional: now)</label><input id="rec-until" name="until" type="datetime-local" step="1">
<fieldset><legend>Which deliveries</legend><label><input type="checkbox" name="failed_only" value="1" checked> Failed ones only</label></fieldset>
<div><button type="submit" class="secondary">Start recovery</button></div>`,
    csrf,
    'stack',
  );
  const recent = jobs.data.length
    ? html`<ul>${jobs.data.map(
        (job) =>
          html`<li><a href="${BASE}/webhooks/${id}/recoveries/${job.id}">${when(job.created_at)}</a>: ${job.status}, ${job.attempted} attempted of ${job.total}</li>`,
      )}</ul>`
    : '';
  const danger = dangerLink(`/webhooks/${id}/delete`, 'Delete webhook');
  const content = html`${facts}
${health}
<section aria-labelledby="log-h"><h2 id="log-h">Delivery log</h2>${filter}${rows}${older}${newest}</section>
<section aria-labelledby="edit-h"><h2 id="edit-h">Edit</h2>${edit}</section>
<section aria-labelledby="rotate-h"><h2 id="rotate-h">Signing secret</h2>${rotate}</section>
<section aria-labelledby="rec-h"><h2 id="rec-h">Recover after an outage</h2>${recent}${recovery}</section>
<section aria-labelledby="danger-h"><h2 id="danger-h">Delete</h2><p>Deleting stops every delivery to this endpoint.</p>${danger}</section>`;
  return { title: `Webhook ${hook.url}`, section: '/webhooks', content };
}

const back = ([id = '']: readonly string[]) => `/webhooks/${id}`;

async function update({ api, params, form }: DashboardRequest) {
  const [id = ''] = params;
  await api.send('PUT', `/webhooks/${id}`, {
    url: form.get('url') ?? '',
    events: checked(form, 'events'),
    ...optionsFromForm(form, 'update'),
  });
  return { to: back(params), flash: { kind: 'notice' as const, text: 'Webhook saved.' } };
}

const setActive =
  (active: boolean) =>
  async ({ api, params }: DashboardRequest) => {
    await api.send('PUT', `/webhooks/${params[0]}`, { active });
    return {
      to: back(params),
      flash: { kind: 'notice' as const, text: active ? 'Webhook resumed.' : 'Webhook paused.' },
    };
  };

async function confirmRemove({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: hook } = await api.get<WebhookItem>(`/webhooks/${id}`);
  const content = html`<dl class="facts"><dt>URL</dt><dd class="mono">${hook.url}</dd><dt>Events</dt><dd>${hook.events.join(', ')}</dd></dl>
<p>Deleting stops every delivery to this endpoint at once, scheduled retries included. It cannot be undone.</p>
${confirmForm(`/webhooks/${id}/delete`, 'Delete webhook', page.csrf, `/webhooks/${id}`)}`;
  return { title: 'Delete this webhook?', section: '/webhooks', content };
}

async function remove({ api, params, form }: DashboardRequest) {
  if (!isConfirmed(form)) return { to: `/webhooks/${params[0]}/delete` };
  await api.send('DELETE', `/webhooks/${params[0]}`);
  return { to: '/webhooks', flash: { kind: 'notice' as const, text: 'Webhook deleted.' } };
}

async function test({ api, params }: DashboardRequest) {
  const { body } = await api.send<{ success: boolean; message: string }>('POST', `/webhooks/${params[0]}/test`);
  return {
    to: back(params),
    flash: { kind: body.success ? ('notice' as const) : ('error' as const), text: `Test event: ${body.message}` },
  };
}

async function rotate({ api, params, form }: DashboardRequest) {
  const grace = Number(form.get('grace_period_seconds') ?? 86_400);
  const { body } = await api.send<{ signing_secret: string; previous_secret_expires_at: string | null }>(
    'POST',
    `/webhooks/${params[0]}/rotate-secret`,
    { grace_period_seconds: Number.isFinite(grace) ? grace : 86_400 },
  );
  const until = body.previous_secret_expires_at
    ? `The previous secret keeps signing until ${when(body.previous_secret_expires_at)}.`
    : 'The previous secret no longer signs.';
  return {
    to: back(params),
    flash: {
      kind: 'notice' as const,
      text: `Signing secret rotated. ${until}`,
      secret: { label: 'New signing secret', value: body.signing_secret },
    },
  };
}

async function delivery({ api, page, params }: DashboardRequest) {
  const [id = '', deliveryId = ''] = params;
  const [{ body: d }, { body: hook }] = await Promise.all([
    api.get<DeliveryItem>(`/webhooks/${id}/deliveries/${deliveryId}`),
    api.get<WebhookItem>(`/webhooks/${id}`),
  ]);
  const timeline = d.attempt_log.length
    ? html`<div class="table-wrap" tabindex="0"><table><caption>Attempts</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">HTTP status</th><th scope="col">Duration</th><th scope="col">Error</th></tr></thead>
<tbody>${d.attempt_log.map(
        (a) =>
          html`<tr><td>${when(a.at)}</td><td>${a.kind ?? '—'}</td><td>${a.status_code || 'none'}</td><td>${a.duration_ms} ms</td><td>${a.error || '—'}${a.error_class ? html` <span class="badge">${a.error_class}</span>` : ''}${
            a.retry_after_seconds ? html` (the endpoint asked to wait ${a.retry_after_seconds} s)` : ''
          }</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No attempt yet.</p>`;
  const latest = d.attempt_log.at(-1);
  const exchange = latest
    ? html`<section aria-labelledby="exchange-h"><h2 id="exchange-h">Latest attempt: request and response</h2>
<p>Headers are kept for the latest attempt only (the signing secret itself is never sent).</p>
<h3>Request</h3><p class="mono">POST ${hook.url}</p>${headerList(latest.request_headers, 'Request headers')}
<h3>Response</h3><p>${latest.status_code ? html`HTTP ${latest.status_code}` : html`No answer: ${latest.error || '—'}`}</p>
${headerList(latest.response_headers, 'Response headers')}
<p>Body (first 500 characters):</p><pre id="response-body" tabindex="0">${d.response || '(empty)'}</pre></section>`
    : '';
  const content = html`<p><a href="${BASE}/webhooks/${id}">Back to the webhook</a></p>
<dl class="facts"><dt>Endpoint</dt><dd class="mono">${hook.url}</dd><dt>Event</dt><dd>${d.event}</dd><dt>Status</dt><dd>${deliveryStatus(d.status)}</dd>
<dt>Attempts</dt><dd>${attemptsText(d)}</dd><dt>Next attempt</dt><dd>${when(d.next_attempt_at)}</dd></dl>
<div class="actions">${retryControl(d, hook, page.csrf)}</div>
<section aria-labelledby="attempts-h"><h2 id="attempts-h">Attempt timeline</h2>${timeline}</section>${exchange}
<section aria-labelledby="payload-h"><h2 id="payload-h">Payload</h2><pre id="payload" tabindex="0">${pretty(d.payload ?? '')}</pre>
<button type="button" class="secondary" data-copy="payload">Copy payload</button></section>`;
  return { title: `Delivery ${d.id}`, section: '/webhooks', content };
}

/** The exact payload, indented when it is JSON (the bytes sent are what the API stores; this only spaces them). */
function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

async function retry({ api, params }: DashboardRequest) {
  const [id = '', deliveryId = ''] = params;
  const to = `/webhooks/${id}/deliveries/${deliveryId}`;
  try {
    const { body } = await api.send<{ success: boolean; message: string }>(
      'POST',
      `/webhooks/${id}/deliveries/${deliveryId}/retry`,
    );
    return {
      to,
      flash: { kind: body.success ? ('notice' as const) : ('error' as const), text: `Retry: ${body.message}` },
    };
  } catch (error) {
    if (!(error instanceof ApiCallError) || error.status !== 409) throw error;
    const text =
      `Not retried: ${error.message} A retry is only possible once no attempt is scheduled or running ` +
      '(status failed or succeeded), so a delivery is never sent twice at once. Wait for the attempt to end, then retry.';
    return { to, flash: { kind: 'error' as const, text } };
  }
}

async function startRecovery({ api, params, form }: DashboardRequest) {
  const [id = ''] = params;
  // A datetime-local value, read as UTC; anything else goes to the API as typed, which says what is wrong (422).
  const iso = (value: string | null) => {
    if (!value) return undefined;
    const at = new Date(`${value.length === 16 ? `${value}:00` : value}Z`);
    return Number.isNaN(at.getTime()) ? value : at.toISOString();
  };
  const since = iso(form.get('since'));
  const until = iso(form.get('until'));
  const { body } = await api.send<RecoveryItem>('POST', `/webhooks/${id}/recoveries`, {
    since: since ?? '',
    ...(until ? { until } : {}),
    ...(form.get('failed_only') ? { status: 'failed' } : {}),
  });
  return { to: `/webhooks/${id}/recoveries/${body.id}`, flash: { kind: 'notice' as const, text: 'Recovery started.' } };
}

async function recovery({ api, page, params }: DashboardRequest) {
  const [id = '', recoveryId = ''] = params;
  const { body: r } = await api.get<RecoveryItem>(`/webhooks/${id}/recoveries/${recoveryId}`);
  const done = r.attempted + r.skipped;
  const content = html`<p><a href="${BASE}/webhooks/${id}">Back to the webhook</a></p>
<dl class="facts"><dt>Status</dt><dd id="recovery-status">${r.status}</dd><dt>Window</dt><dd>${when(r.since)} to ${when(r.until)}</dd>
<dt>Deliveries</dt><dd>${r.delivery_status === 'failed' ? 'failed only' : 'all'}</dd>
<dt>Read so far</dt><dd>${r.total}</dd><dt>Attempted</dt><dd>${r.attempted} (${r.succeeded} succeeded, ${r.failed} failed)</dd>
<dt>Skipped</dt><dd>${r.skipped}</dd><dt>Updated</dt><dd>${when(r.updated_at)}</dd></dl>
<p><label for="recovery-progress">Progress</label> <progress id="recovery-progress" max="${Math.max(r.total, 1)}" value="${done}">${done} of ${r.total}</progress></p>
<div class="actions"><a href="${BASE}/webhooks/${id}/recoveries/${recoveryId}">Refresh</a>
${r.status === 'running' ? actionButton(`/webhooks/${id}/recoveries/${recoveryId}/cancel`, 'Cancel recovery', page.csrf) : ''}</div>`;
  return { title: 'Recovery job', section: '/webhooks', content };
}

async function cancelRecovery({ api, params }: DashboardRequest) {
  const [id = '', recoveryId = ''] = params;
  await api.send('POST', `/webhooks/${id}/recoveries/${recoveryId}/cancel`);
  return {
    to: `/webhooks/${id}/recoveries/${recoveryId}`,
    flash: { kind: 'notice' as const, text: 'Recovery canceled.' },
  };
}

export const webhookRoutes = [
  route.get('webhooks', list),
  route.post('webhooks', create, () => '/webhooks'),
  route.get(`webhooks/${ID}`, detail),
  route.post(`webhooks/${ID}`, update, back),
  route.post(`webhooks/${ID}/pause`, setActive(false), back),
  route.post(`webhooks/${ID}/resume`, setActive(true), back),
  route.get(`webhooks/${ID}/delete`, confirmRemove),
  route.post(`webhooks/${ID}/delete`, remove, back),
  route.post(`webhooks/${ID}/test`, test, back),
  route.post(`webhooks/${ID}/rotate`, rotate, back),
  route.post(`webhooks/${ID}/recoveries`, startRecovery, back),
  route.get(`webhooks/${ID}/recoveries/${ID}`, recovery),
  route.post(
    `webhooks/${ID}/recoveries/${ID}/cancel`,
    cancelRecovery,
    ([id, rid]) => `/webhooks/${id}/recoveries/${rid}`,
  ),
  route.get(`webhooks/${ID}/deliveries/${ID}`, delivery),
  route.post(`webhooks/${ID}/deliveries/${ID}/retry`, retry, ([id, did]) => `/webhooks/${id}/deliveries/${did}`),
];
