// Webhooks: the list and the create form; one webhook in tabs, each its own view (overview, the delivery log with
// its status filter and paging, settings and delete, the signing secret, recovery jobs), with test send and
// pause/resume in its header; one delivery (attempt timeline, exact payload,
// retry, with a 409 explained).
import { EVENT_TYPES } from '../../../domain/events';
import { FORMATS } from '../../../domain/webhooks/format';
import { ApiCallError } from '../api-client';
import { at, badge, dataTable, statusBadge, tokens } from '../components';
import { BASE, href, html, type Safe } from '../http';
import {
  actionButton,
  confirmForm,
  dangerLink,
  fieldError,
  invalidAttrs,
  isConfirmed,
  postForm,
  tabs,
  textField,
  when,
} from '../layout';
import { type DashboardRequest, ID, type PageResult, route } from '../routes';
import { retryControl } from './delivery-states';
import { deliveryHealthSection, successSparklines, windowOf } from './health-figures';
import {
  apiFilterQuery,
  DELIVERY_EVENT_TYPES,
  filtered,
  filterFields,
  pageFilterQuery,
  readListFilters,
} from './list-filters';
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
import { answerText, destinationSection } from './webhook-destination';
import { filterField, filterFromForm, testFilterAction } from './webhook-filter';
import { disabledSection, lastFailureText, stateBadge, successRateText } from './webhook-health';
import { optionFacts, optionFields, optionsFromForm } from './webhook-options';
import { simulateTransformationAction, transformationField, transformationFromForm } from './webhook-transformation';

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
    ? dataTable(
        'Webhook endpoints',
        ['Endpoint', 'State', 'Success (24 h)', 'Trend (24 h)', 'Last failure', 'Events'],
        body.data.map((w) => [
          html`<a href="${BASE}/webhooks/${w.id}">${tokens(w.url)}</a>`,
          stateBadge(w),
          successRateText(w),
          trends.get(w.id) ?? '—',
          lastFailureText(w, true),
          w.events.join(', '),
        ]),
        { classes: ['url'] },
      )
    : html`<p>No webhooks in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/webhooks',
    html`${textField(page, { id: 'wh-url', name: 'url', label: 'Endpoint URL', type: 'url', attrs: html` required placeholder="https://example.com/webhooks/sendflow"` })}
${eventPicker(['email.delivered', 'email.bounced'], 'Events to send')}${fieldError(page, 'events', 'wh-events')}
<label for="wh-format">Format</label><select id="wh-format" name="format"><option value="">Detect from the URL</option>${FORMATS.map(
      (f) => html`<option value="${f}">${f}</option>`,
    )}</select>
${textField(page, { id: 'wh-description', name: 'description', label: 'Description (optional)', attrs: html` maxlength="500"` })}
${optionFields(page, 'wh', null)}
<div><button type="submit">Create webhook</button></div>`,
    page.csrf,
    'stack',
  );
  const api_ = page.apiUrl ? html`SENDFLOW_API_URL=${page.apiUrl} ` : '';
  return {
    title: 'Webhooks',
    section: '/webhooks',
    actions: html`<a class="button secondary" href="${BASE}/event-types">Event types</a>`,
    content: html`<section aria-labelledby="list-h"><h2 id="list-h">Endpoints</h2>${rows}</section>
<section aria-labelledby="new-h"><h2 id="new-h">New webhook</h2>${form}</section>
<section aria-labelledby="listen-h"><h2 id="listen-h">Test on your laptop</h2>
<p>No public URL needed: this forwards this mode's events to an app on your machine, signed with the secret it prints
(docs/webhooks.md, "Listen on your laptop"). Replace <code>PORT</code> with the port your app listens on.</p>
<pre class="code" tabindex="0"><code>${api_}SENDFLOW_API_KEY=sf_${page.mode}_… npm run listen -- --forward-to http://127.0.0.1:PORT/webhooks</code></pre></section>`,
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

/** The webhook page's tabs, each its own view (a sub-route of the webhook). */
const TABS = (id: string) =>
  [
    [`/webhooks/${id}`, 'Overview'],
    [`/webhooks/${id}/deliveries`, 'Deliveries'],
    [`/webhooks/${id}/settings`, 'Settings'],
    [`/webhooks/${id}/secret`, 'Signing secret'],
    [`/webhooks/${id}/recovery`, 'Recovery'],
  ] as const;

/** One tab of a webhook's page: its title, the actions every tab offers (test send, pause), the tabs. */
function webhookView(hook: WebhookItem, tab: string, csrf: string, content: Safe): PageResult {
  // A disabled webhook's Resume is in its explanation; the button here pauses or resumes one its owner paused.
  const toggle = hook.disabled_reason
    ? ''
    : actionButton(`/webhooks/${hook.id}/${hook.active ? 'pause' : 'resume'}`, hook.active ? 'Pause' : 'Resume', csrf);
  return {
    title: `Webhook ${hook.url}`,
    section: '/webhooks',
    back: ['/webhooks', 'Webhooks'],
    actions: html`${actionButton(`/webhooks/${hook.id}/test`, 'Send test event', csrf, '')}${toggle}`,
    tabs: tabs('Webhook', TABS(hook.id), `/webhooks/${hook.id}${tab}`),
    content,
  };
}

function deliveryRows(id: string, deliveries: readonly DeliveryItem[], caption: string, hidden = false): Safe {
  return dataTable(
    caption,
    ['Time', 'Event', 'Status', 'Attempts', 'Result', 'Next attempt'],
    deliveries.map((d) => [
      html`<a href="${BASE}/webhooks/${id}/deliveries/${d.id}">${at(d.created_at)}</a>`,
      d.event,
      deliveryStatus(d.status),
      d.attempts,
      failureText(d),
      d.next_attempt_at ? at(d.next_attempt_at) : '—',
    ]),
    { hiddenCaption: hidden },
  );
}

/** Overview: the facts and health, why it is disabled (when it is), the newest deliveries. */
async function overview({ api, page, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const [{ body: hook }, { body: log }, health] = await Promise.all([
    api.get<WebhookItem>(`/webhooks/${id}`),
    api.get<{ data: DeliveryItem[]; has_more: boolean }>(`/webhooks/${id}/deliveries`, { limit: '20' }),
    deliveryHealthSection(api, { path: `/webhooks/${id}`, window: windowOf(query), webhookId: id }),
  ]);
  const facts = html`<dl class="facts"><dt>URL</dt><dd class="mono">${tokens(hook.url)}</dd><dt>State</dt><dd>${stateBadge(hook)}</dd>
<dt>Success (24 h)</dt><dd>${successRateText(hook)}</dd><dt>Last failure</dt><dd>${lastFailureText(hook)}</dd>
<dt>Events</dt><dd>${hook.events.join(', ')}</dd><dt>Format</dt><dd>${hook.format ?? 'standard'}</dd>
<dt>Description</dt><dd>${hook.description || '—'}</dd>${optionFacts(hook)}<dt>Created</dt><dd>${when(hook.created_at)}</dd></dl>`;
  const newest = log.data.slice(0, 5);
  const recent = newest.length
    ? html`${deliveryRows(id, newest, 'Newest deliveries', true)}<p><a href="${BASE}/webhooks/${id}/deliveries">All deliveries</a></p>`
    : html`<p>No deliveries yet. Send a test event to see one.</p>`;
  const content = html`${disabledSection(hook, log.data, page.csrf)}
<section aria-labelledby="facts-h"><h2 id="facts-h">Endpoint</h2>${facts}</section>
${destinationSection(hook)}
${health}
<section aria-labelledby="recent-h"><h2 id="recent-h">Newest deliveries</h2>${recent}</section>`;
  return webhookView(hook, '', page.csrf, content);
}

/** Deliveries: the log, 20 a page, filtered by status, event type and time; paging keeps the filters. */
async function deliveries({ api, page, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const status = DELIVERY_STATUSES.find((s) => s === query.status);
  const filters = readListFilters(query, DELIVERY_EVENT_TYPES);
  const after = query.after;
  const [{ body: hook }, { body: log }] = await Promise.all([
    api.get<WebhookItem>(`/webhooks/${id}`),
    api.get<{ data: DeliveryItem[]; has_more: boolean; next_after: string | null }>(`/webhooks/${id}/deliveries`, {
      limit: '20',
      status,
      after,
      ...apiFilterQuery(filters),
    }),
  ]);
  const kept = { status, ...pageFilterQuery(filters) };
  const filter = html`<form method="get" action="${BASE}/webhooks/${id}/deliveries" class="filters"><div class="field"><label for="status-filter">Status</label>
<select id="status-filter" name="status"><option value="">All</option>${DELIVERY_STATUSES.map(
    (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
  )}</select></div>
${filterFields(filters, 'log', DELIVERY_EVENT_TYPES)}<div class="field"><button type="submit" class="secondary">Filter</button></div></form>`;
  const narrowed = status || filtered(filters);
  const rows = log.data.length
    ? deliveryRows(id, log.data, `Deliveries${status ? ` (${status})` : ''}`)
    : html`<p>${log.has_more ? 'None of the deliveries read so far matches: look further with “Older deliveries”.' : `No deliveries${narrowed ? ' match these filters' : ''}.`}</p>`;
  // A filtered read can stop short (even empty) with more to read: next_after says where to go on.
  const next = log.has_more ? (log.next_after ?? log.data.at(-1)?.id) : undefined;
  const older = next
    ? html`<a href="${href(`/webhooks/${id}/deliveries`, { ...kept, after: next })}">Older deliveries</a>`
    : '';
  const newest = after ? html`<a href="${href(`/webhooks/${id}/deliveries`, kept)}">Newest deliveries</a>` : '';
  const content = html`<section aria-labelledby="log-h"><h2 id="log-h">Delivery log</h2>${filter}${rows}
${older || newest ? html`<div class="actions">${newest}${older}</div>` : ''}</section>`;
  return webhookView(hook, '/deliveries', page.csrf, content);
}

/** Settings: edit the URL, events and delivery options; delete. */
async function settings({ api, page, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const { body: hook } = await api.get<WebhookItem>(`/webhooks/${id}`);
  const edit = postForm(
    `/webhooks/${id}`,
    html`${textField(page, {
      id: 'edit-url',
      name: 'url',
      label: 'Endpoint URL',
      type: 'url',
      // An AWS destination's url is its stand-in: shown, never edited (the destination is set when it is made).
      attrs: html` required value="${hook.url}"${hook.destination && hook.destination.type !== 'http' ? html` readonly` : ''}`,
    })}
${eventPicker(hook.events, 'Events')}${fieldError(page, 'events', 'edit-events')}
${optionFields(page, 'edit', hook)}
${filterField(id, hook, query.filter_draft)}
${transformationField(page, id, hook, query.transformation_draft)}<div><button type="submit">Save changes</button></div>`,
    page.csrf,
    'stack',
  );
  const content = html`<section aria-labelledby="edit-h"><h2 id="edit-h">Edit webhook</h2>${edit}</section>
<section aria-labelledby="danger-h"><h2 id="danger-h">Delete</h2><p>Deleting stops every delivery to this endpoint.</p>${dangerLink(`/webhooks/${id}/delete`, 'Delete webhook')}</section>`;
  return webhookView(hook, '/settings', page.csrf, content);
}

/** Signing secret: rotate it, keeping the old one signing for a while. */
async function secret({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: hook } = await api.get<WebhookItem>(`/webhooks/${id}`);
  const rotate = postForm(
    `/webhooks/${id}/rotate`,
    html`<label for="grace">Keep the previous secret signing for</label><select id="grace" name="grace_period_seconds">${GRACE_PERIODS.map(
      ([seconds, label]) =>
        html`<option value="${seconds}"${seconds === 86_400 ? html` selected` : ''}>${label}</option>`,
    )}</select><div><button type="submit" class="secondary">Rotate signing secret</button></div>`,
    page.csrf,
    'stack',
  );
  const content = html`<section aria-labelledby="rotate-h"><h2 id="rotate-h">Signing secret</h2>
<p>Every request to this endpoint is signed with its secret, shown once when the webhook was made. Rotating makes a
new one (shown once); the previous one can keep signing beside it while your receiver moves over.</p>${rotate}</section>`;
  return webhookView(hook, '/secret', page.csrf, content);
}

/** Recovery: the recent recovery jobs, and start one over a window. */
async function recoveries({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const [{ body: hook }, { body: jobs }] = await Promise.all([
    api.get<WebhookItem>(`/webhooks/${id}`),
    api.get<{ data: RecoveryItem[] }>(`/webhooks/${id}/recoveries`),
  ]);
  const recovery = postForm(
    `/webhooks/${id}/recoveries`,
    html`<p>Replays every delivery of a window once, in the background (docs/webhooks.md, "Recovery jobs").</p>
<label for="rec-since">From (UTC)</label><input id="rec-since" name="since" type="datetime-local" required step="1"${invalidAttrs(page, 'since', 'rec-since')}>${fieldError(page, 'since', 'rec-since')}
<label for="rec-until">Until (UTC, optional: now)</label><input id="rec-until" name="until" type="datetime-local" step="1"${invalidAttrs(page, 'until', 'rec-until')}>${fieldError(page, 'until', 'rec-until')}
<fieldset><legend>Which deliveries</legend><label><input type="checkbox" name="failed_only" value="1" checked> Failed ones only</label></fieldset>
<div><button type="submit" class="secondary">Start recovery</button></div>`,
    page.csrf,
    'stack',
  );
  const recent = jobs.data.length
    ? dataTable(
        'Recovery jobs',
        ['Started', 'Status', 'Attempted'],
        jobs.data.map((job) => [
          html`<a href="${BASE}/webhooks/${id}/recoveries/${job.id}">${at(job.created_at)}</a>`,
          statusBadge(job.status),
          `${job.attempted} of ${job.total}`,
        ]),
        { hiddenCaption: true },
      )
    : html`<p>No recovery job yet.</p>`;
  const content = html`<section aria-labelledby="jobs-h"><h2 id="jobs-h">Recovery jobs</h2>${recent}</section>
<section aria-labelledby="rec-h"><h2 id="rec-h">Recover after an outage</h2>${recovery}</section>`;
  return webhookView(hook, '/recovery', page.csrf, content);
}

const back = ([id = '']: readonly string[]) => `/webhooks/${id}`;
const backTo =
  (tab: string) =>
  ([id = '']: readonly string[]) =>
    `/webhooks/${id}${tab}`;

async function update({ api, params, form }: DashboardRequest) {
  const [id = ''] = params;
  await api.send('PUT', `/webhooks/${id}`, {
    url: form.get('url') ?? '',
    events: checked(form, 'events'),
    ...optionsFromForm(form, 'update'),
    ...filterFromForm(form),
    ...transformationFromForm(form),
  });
  return { to: backTo('/settings')(params), flash: { kind: 'notice' as const, text: 'Webhook saved.' } };
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
  const content = html`<section aria-labelledby="confirm-h"><h2 id="confirm-h" class="visually-hidden">What goes</h2>
<dl class="facts"><dt>URL</dt><dd class="mono">${tokens(hook.url)}</dd><dt>Events</dt><dd>${hook.events.join(', ')}</dd></dl>
<p>Deleting stops every delivery to this endpoint at once, scheduled retries included. It cannot be undone.</p>
${confirmForm(`/webhooks/${id}/delete`, 'Delete webhook', page.csrf, `/webhooks/${id}/settings`)}</section>`;
  return {
    title: 'Delete this webhook?',
    section: '/webhooks',
    back: [`/webhooks/${id}/settings`, 'Webhook settings'] as const,
    content,
  };
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
    to: backTo('/secret')(params),
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
    ? dataTable(
        'Attempts',
        ['Time', 'Kind', 'Answer', 'Duration', 'Error'],
        d.attempt_log.map((a) => [
          at(a.at),
          a.kind ?? '—',
          answerText(a),
          `${a.duration_ms} ms`,
          html`${a.error || '—'}${a.error_class ? html` ${badge(a.error_class.replaceAll('_', ' '), 'bad')}` : ''}${
            a.retry_after_seconds ? html` (the endpoint asked to wait ${a.retry_after_seconds} s)` : ''
          }`,
        ]),
      )
    : html`<p>No attempt yet.</p>`;
  const latest = d.attempt_log.at(-1);
  const exchange = latest
    ? html`<section aria-labelledby="exchange-h"><h2 id="exchange-h">Latest attempt: request and response</h2>
<p>Headers are kept for the latest attempt only (the signing secret itself is never sent).</p>
<h3>Request</h3><p class="mono">POST ${tokens(hook.url)}</p>${headerList(latest.request_headers, 'Request headers')}
<h3>Response</h3><p>${latest.status_code ? html`HTTP ${latest.status_code}` : html`No answer: ${latest.error || '—'}`}</p>
${headerList(latest.response_headers, 'Response headers')}
<p>Body (first 500 characters):</p><pre id="response-body" tabindex="0">${d.response || '(empty)'}</pre></section>`
    : '';
  const content = html`<section aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>
<dl class="facts"><dt>Endpoint</dt><dd class="mono">${tokens(hook.url)}</dd><dt>Event</dt><dd>${d.event}</dd><dt>Status</dt><dd>${deliveryStatus(d.status)}</dd>
<dt>Attempts</dt><dd>${attemptsText(d)}</dd><dt>Next attempt</dt><dd>${when(d.next_attempt_at)}</dd></dl></section>
<section aria-labelledby="attempts-h"><h2 id="attempts-h">Attempt timeline</h2>${timeline}</section>${exchange}
<section aria-labelledby="payload-h"><h2 id="payload-h">Payload</h2><pre id="payload" class="code" tabindex="0">${pretty(d.payload ?? '')}</pre>
<button type="button" class="secondary" data-copy="payload">Copy payload</button></section>`;
  return {
    title: `Delivery ${d.id}`,
    section: '/webhooks',
    back: [`/webhooks/${id}/deliveries`, 'Deliveries of the webhook'] as const,
    actions: retryControl(d, hook, page.csrf),
    content,
  };
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
  const content = html`<section aria-labelledby="job-h"><h2 id="job-h">Progress</h2>
<dl class="facts"><dt>Status</dt><dd id="recovery-status">${statusBadge(r.status)}</dd><dt>Window</dt><dd>${when(r.since)} to ${when(r.until)}</dd>
<dt>Deliveries</dt><dd>${r.delivery_status === 'failed' ? 'failed only' : 'all'}</dd>
<dt>Read so far</dt><dd>${r.total}</dd><dt>Attempted</dt><dd>${r.attempted} (${r.succeeded} succeeded, ${r.failed} failed)</dd>
<dt>Skipped</dt><dd>${r.skipped}</dd><dt>Updated</dt><dd>${when(r.updated_at)}</dd></dl>
<p><label for="recovery-progress">Progress</label> <progress id="recovery-progress" max="${Math.max(r.total, 1)}" value="${done}">${done} of ${r.total}</progress></p>
</section>`;
  return {
    title: 'Recovery job',
    section: '/webhooks',
    back: [`/webhooks/${id}/recovery`, 'Recovery of the webhook'] as const,
    actions: html`<a class="button secondary" href="${BASE}/webhooks/${id}/recoveries/${recoveryId}">Refresh</a>
${r.status === 'running' ? actionButton(`/webhooks/${id}/recoveries/${recoveryId}/cancel`, 'Cancel recovery', page.csrf) : ''}`,
    content,
  };
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
  route.get(`webhooks/${ID}`, overview),
  route.get(`webhooks/${ID}/deliveries`, deliveries),
  route.get(`webhooks/${ID}/settings`, settings),
  route.get(`webhooks/${ID}/secret`, secret),
  route.get(`webhooks/${ID}/recovery`, recoveries),
  route.post(`webhooks/${ID}`, update, backTo('/settings')),
  route.post(`webhooks/${ID}/pause`, setActive(false), back),
  route.post(`webhooks/${ID}/resume`, setActive(true), back),
  route.get(`webhooks/${ID}/delete`, confirmRemove),
  route.post(`webhooks/${ID}/delete`, remove, backTo('/settings')),
  route.post(`webhooks/${ID}/test`, test, back),
  route.post(`webhooks/${ID}/filter-test`, testFilterAction, backTo('/settings')),
  route.post(`webhooks/${ID}/transformation-simulate`, simulateTransformationAction, backTo('/settings')),
  route.post(`webhooks/${ID}/rotate`, rotate, backTo('/secret')),
  route.post(`webhooks/${ID}/recoveries`, startRecovery, backTo('/recovery')),
  route.get(`webhooks/${ID}/recoveries/${ID}`, recovery),
  route.post(
    `webhooks/${ID}/recoveries/${ID}/cancel`,
    cancelRecovery,
    ([id, rid]) => `/webhooks/${id}/recoveries/${rid}`,
  ),
  route.get(`webhooks/${ID}/deliveries/${ID}`, delivery),
  route.post(`webhooks/${ID}/deliveries/${ID}/retry`, retry, ([id, did]) => `/webhooks/${id}/deliveries/${did}`),
];
