// Emails: the list, newest first, filtered by status or recipient (GET /v1/emails), and one email: recipients,
// status, event timeline, and the webhook deliveries it caused (GET /v1/emails/:id/deliveries).
import { EVENT_TYPES } from '../../../domain/events';
import { BASE, href, html } from '../http';
import { when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';
import { type DeliveryItem, deliveryStatus } from './views';

/** The statuses GET /v1/emails filters on: queued, canceled, and each email event's name without `email.`. */
const EMAIL_STATUSES: readonly string[] = [
  'queued',
  'canceled',
  ...EVENT_TYPES.filter((type) => type.startsWith('email.') && type !== 'email.unsubscribed').map((type) =>
    type.replace(/^email\./, ''),
  ),
];

interface EmailItem {
  id: string;
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  status: string;
  created_at: string;
  scheduled_at?: string | null;
  events?: { id: string; type: string; to: string | null; timestamp: string }[];
}

async function list({ api, query }: DashboardRequest) {
  const status = EMAIL_STATUSES.find((s) => s === query.status);
  const to = query.to?.trim() || undefined;
  const { body } = await api.get<{ data: EmailItem[]; has_more: boolean }>('/emails', {
    limit: '20',
    status,
    to,
    after: query.after,
  });
  const filter = html`<form method="get" action="${BASE}/emails" class="stack">
<label for="email-status">Status</label><select id="email-status" name="status"><option value="">Any</option>${EMAIL_STATUSES.map(
    (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
  )}</select>
<label for="email-to">Recipient</label><input id="email-to" name="to" type="email" value="${to ?? ''}">
<div><button type="submit" class="secondary">Filter</button></div></form>`;
  const rows = body.data.length
    ? html`<div class="table-wrap"><table><caption>Emails, newest first</caption>
<thead><tr><th scope="col">Sent</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Status</th></tr></thead>
<tbody>${body.data.map(
        (e) => html`<tr><td><a href="${BASE}/emails/${e.id}">${when(e.created_at)}</a></td><td>${e.to.join(', ')}</td>
<td>${e.subject}</td><td>${e.status}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No emails match.</p>`;
  const older =
    body.has_more && body.data.length
      ? html`<p><a href="${href('/emails', { status, to, after: body.data.at(-1)?.id })}">Older emails</a></p>`
      : '';
  return { title: 'Emails', section: '/emails', content: html`${filter}${rows}${older}` };
}

async function detail({ api, params }: DashboardRequest) {
  const [id = ''] = params;
  const [{ body: e }, { body: deliveries }] = await Promise.all([
    api.get<EmailItem>(`/emails/${id}`),
    api.get<{ data: DeliveryItem[] }>(`/emails/${id}/deliveries`),
  ]);
  const events = e.events?.length
    ? html`<ol>${e.events.map((ev) => html`<li>${when(ev.timestamp)}: ${ev.type}${ev.to ? ` (${ev.to})` : ''}</li>`)}</ol>`
    : html`<p>No events yet.</p>`;
  const hooks = deliveries.data.length
    ? html`<div class="table-wrap"><table><caption>Webhook deliveries of this email</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">HTTP</th></tr></thead>
<tbody>${deliveries.data.map(
        (d) => html`<tr><td><a href="${BASE}/webhooks/${d.webhook_id}/deliveries/${d.id}">${d.event}</a></td>
<td>${deliveryStatus(d.status)}</td><td>${d.status_code ?? '—'}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No webhook deliveries.</p>`;
  const content = html`<p><a href="${BASE}/emails">All emails</a></p>
<dl class="facts"><dt>Status</dt><dd>${e.status}</dd><dt>From</dt><dd>${e.from}</dd><dt>To</dt><dd>${e.to.join(', ')}</dd>
${e.cc?.length ? html`<dt>Cc</dt><dd>${e.cc.join(', ')}</dd>` : ''}${e.bcc?.length ? html`<dt>Bcc</dt><dd>${e.bcc.join(', ')}</dd>` : ''}
<dt>Created</dt><dd>${when(e.created_at)}</dd></dl>
<section aria-labelledby="events-h"><h2 id="events-h">Events</h2>${events}</section>
<section aria-labelledby="hooks-h"><h2 id="hooks-h">Webhook deliveries</h2>${hooks}</section>`;
  return { title: `Email: ${e.subject}`, section: '/emails', content };
}

export const emailRoutes = [route.get('emails', list), route.get(`emails/${ID}`, detail)];
