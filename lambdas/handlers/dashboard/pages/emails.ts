// Emails: the list, newest first, filtered by status or recipient (GET /v1/emails), and one email in tabs, each
// its own view: the overview (id, tags, recipients, status, event timeline), the content (the HTML in a sandboxed
// frame, inline images inlined from their attachments (else placeholders), the text as text, the attachments with download links: GET
// /v1/emails/:id/attachments, asked only when it has some), and the webhook deliveries it caused (GET
// /v1/emails/:id/deliveries), each with its endpoint and result.
import { EVENT_TYPES } from '../../../domain/events';
import { at, dataTable, statusBadge, tokens } from '../components';
import { BASE, href, html, PREVIEW_HEADERS, type Safe } from '../http';
import { tabs, when } from '../layout';
import { type DashboardRequest, ID, type PageResult, route } from '../routes';
import { deliveriesByEvent, emailTime } from './delivery-states';
import { cidsOf, inlineImagePlaceholders } from './inline-images';
import {
  apiFilterQuery,
  EMAIL_EVENT_TYPES,
  filtered,
  filterFields,
  pageFilterQuery,
  readListFilters,
} from './list-filters';
import type { DeliveryItem, WebhookItem } from './views';

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
  canceled_at?: string | null;
  events?: { id: string; type: string; to: string | null; timestamp: string }[];
  tags?: { name: string; value: string }[];
  html?: string | null;
  text?: string | null;
  attachments?: AttachmentItem[];
  template_id?: string | null;
}

interface AttachmentItem {
  id: string;
  filename: string;
  size: number;
  content_type: string;
  content_disposition: string;
  content_id: string | null;
  download_url?: string;
  expires_at?: string;
}

/** 1,234 bytes, 12.3 KB, 4.5 MB (KB = 1,000 bytes, as the API's limits are written). */
export function fileSize(bytes: number): string {
  if (bytes < 1000) return `${bytes.toLocaleString('en-US')} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

async function list({ api, query }: DashboardRequest) {
  const status = EMAIL_STATUSES.find((s) => s === query.status);
  const to = query.to?.trim() || undefined;
  const filters = readListFilters(query);
  const { body } = await api.get<{ data: EmailItem[]; has_more: boolean; next_after: string | null }>('/emails', {
    limit: '20',
    status,
    to,
    after: query.after,
    since: filters.since,
    until: filters.until,
  });
  const kept = { status, to, ...pageFilterQuery(filters) };
  const filter = html`<form method="get" action="${BASE}/emails" class="filters">
<div class="field"><label for="email-status">Status</label><select id="email-status" name="status"><option value="">Any</option>${EMAIL_STATUSES.map(
    (s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`,
  )}</select></div>
<div class="field"><label for="email-to">Recipient</label><input id="email-to" name="to" type="email" value="${to ?? ''}"></div>
${filterFields(filters, 'emails')}<div class="field"><button type="submit" class="secondary">Filter</button></div></form>`;
  const rows = body.data.length
    ? dataTable(
        'Emails, newest first',
        ['When', 'To', 'Subject', 'Status'],
        body.data.map((e) => [
          html`<a href="${BASE}/emails/${e.id}">${emailTime(e)}</a>`,
          tokens(e.to.join(', ')),
          e.subject,
          statusBadge(e.status),
        ]),
      )
    : html`<p>${body.has_more ? 'None of the emails read so far matches: look further with “Older emails”.' : 'No emails match.'}</p>`;
  // A filtered read can stop short (even empty) with more to read: next_after says where to go on.
  const next = body.has_more ? (body.next_after ?? body.data.at(-1)?.id) : undefined;
  const older = next ? html`<p><a href="${href('/emails', { ...kept, after: next })}">Older emails</a></p>` : '';
  return {
    title: 'Emails',
    section: '/emails',
    content: html`<section aria-labelledby="emails-h"><h2 id="emails-h" class="visually-hidden">Emails</h2>${filter}${rows}${older}</section>`,
  };
}

/** The email page's tabs, each its own view. */
const TABS = (id: string) =>
  [
    [`/emails/${id}`, 'Overview'],
    [`/emails/${id}/content`, 'Content'],
    [`/emails/${id}/deliveries`, 'Webhook deliveries'],
  ] as const;

function emailView(e: EmailItem, tab: string, content: Safe): PageResult {
  return {
    title: `Email: ${e.subject}`,
    section: '/emails',
    back: ['/emails', 'Emails'],
    tabs: tabs('Email', TABS(e.id), `/emails/${e.id}${tab}`),
    content,
  };
}

/** Overview: id, status, sender and recipients, tags, the event timeline. */
async function detail({ api, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: e } = await api.get<EmailItem>(`/emails/${id}`);
  const events = e.events?.length
    ? html`<ol class="timeline">${e.events.map((ev) => html`<li>${at(ev.timestamp)} ${statusBadge(ev.type.replace(/^email\./, ''))} ${ev.type}${ev.to ? html` (${tokens(ev.to)})` : ''}</li>`)}</ol>`
    : html`<p>No events yet.</p>`;
  const tags = e.tags?.length
    ? html`<ul class="tags">${e.tags.map((t) => html`<li><span class="badge tone-neutral">${t.name}: ${t.value}</span></li>`)}</ul>`
    : 'none';
  const content = html`<section aria-labelledby="facts-h"><h2 id="facts-h">Email</h2>
<dl class="facts"><dt>Id</dt><dd class="mono" id="email-id">${e.id}</dd><dt>Status</dt><dd>${statusBadge(e.status)}</dd><dt>From</dt><dd>${tokens(e.from)}</dd><dt>To</dt><dd>${tokens(e.to.join(', '))}</dd>
${e.cc?.length ? html`<dt>Cc</dt><dd>${tokens(e.cc.join(', '))}</dd>` : ''}${e.bcc?.length ? html`<dt>Bcc</dt><dd>${tokens(e.bcc.join(', '))}</dd>` : ''}
<dt>Created</dt><dd>${when(e.created_at)}</dd>${e.canceled_at ? html`<dt>Canceled</dt><dd>${when(e.canceled_at)}</dd>` : ''}<dt>Tags</dt><dd>${tags}</dd>
${e.template_id ? html`<dt>Template</dt><dd><a class="mono" href="${BASE}/templates/${e.template_id}">${e.template_id}</a></dd>` : ''}</dl></section>
<section aria-labelledby="events-h"><h2 id="events-h">Events</h2>${events}</section>`;
  return emailView(e, '', content);
}

/** Content: the HTML body in a sandboxed frame, the text body, the attachments with download links. */
async function content({ api, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: e } = await api.get<EmailItem>(`/emails/${id}`);
  // Links are made on each view (they expire in an hour), only for an email that has attachments.
  const files = e.attachments?.length
    ? (await api.get<{ data: AttachmentItem[] }>(`/emails/${id}/attachments`)).body.data
    : [];
  const attachments = files.length
    ? dataTable(
        'Attachments (links work for an hour)',
        ['Name', 'Size', 'Type', 'Download'],
        files.map((a) => [
          html`${a.filename}${a.content_id ? html` <span class="badge tone-info">inline: ${a.content_id}</span>` : ''}`,
          fileSize(a.size),
          html`<span class="mono">${a.content_type}</span>`,
          html`<a href="${a.download_url ?? '#'}" download="${a.filename}" rel="noreferrer">Download ${a.filename}</a>`,
        ]),
      )
    : html`<p>No attachments.</p>`;
  const bodies = html`<section aria-labelledby="body-h"><h2 id="body-h">Content</h2>
${
  e.html
    ? html`<h3>HTML</h3><iframe class="preview" sandbox="" referrerpolicy="no-referrer" title="Preview of the HTML body" src="${BASE}/emails/${e.id}/preview"></iframe>
<p class="hint">Shown without scripts or remote images (nothing is fetched, so no open is counted); an inline image shows the attached image (PNG, JPEG, GIF or WebP up to 1 MB), any other a placeholder naming its attachment.</p>`
    : html`<p>No HTML body.</p>`
}
<h3>Text</h3>${e.text ? html`<pre id="text-body" tabindex="0">${e.text}</pre>` : html`<p>No text body.</p>`}</section>`;
  return emailView(
    e,
    '/content',
    html`${bodies}<section aria-labelledby="files-h"><h2 id="files-h">Attachments</h2>${attachments}</section>`,
  );
}

/** Webhook deliveries: what this email's events caused, each with its endpoint and result; filtered, paged. */
async function deliveries({ api, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const filters = readListFilters(query, EMAIL_EVENT_TYPES);
  const [{ body: e }, { body: found }, { body: webhooks }] = await Promise.all([
    api.get<EmailItem>(`/emails/${id}`),
    api.get<{ data: DeliveryItem[]; has_more: boolean; next_after: string | null }>(`/emails/${id}/deliveries`, {
      limit: '20',
      after: query.after,
      ...apiFilterQuery(filters),
    }),
    api.get<{ data: WebhookItem[] }>('/webhooks'),
  ]);
  const endpoints = new Map(webhooks.data.map((hook) => [hook.id, hook.url]));
  const path = `/emails/${id}/deliveries`;
  const form = html`<form method="get" action="${BASE}${path}" class="filters">${filterFields(filters, 'hooks', EMAIL_EVENT_TYPES)}<div class="field"><button type="submit" class="secondary">Filter</button></div></form>`;
  // Grouped by the event that caused them, each with its recipient and time (pages/delivery-states).
  const hooks =
    found.data.length || !filtered(filters)
      ? deliveriesByEvent(found.data, e.events ?? [], endpoints)
      : html`<p>No webhook deliveries match these filters.</p>`;
  const kept = pageFilterQuery(filters);
  const older =
    found.has_more && found.next_after
      ? html`<a href="${href(path, { ...kept, after: found.next_after })}">Older deliveries</a>`
      : '';
  const newest = query.after ? html`<a href="${href(path, kept)}">Newest deliveries</a>` : '';
  return emailView(
    e,
    '/deliveries',
    html`<section aria-labelledby="hooks-h"><h2 id="hooks-h">Webhook deliveries</h2>${form}${hooks}
${older || newest ? html`<div class="actions">${newest}${older}</div>` : ''}</section>`,
  );
}

/** The HTML body alone, for the email page's frame, under PREVIEW_HEADERS (sandboxed, nothing fetched). */
async function preview({ api, params, inlineImages }: DashboardRequest) {
  const [id = ''] = params;
  const { body: e } = await api.get<EmailItem>(`/emails/${id}`);
  const body = e.html ?? '';
  const wanted = cidsOf(body);
  const images =
    wanted.size && inlineImages ? await inlineImages('emails', e.id, wanted, body.length) : new Map<string, string>();
  return {
    title: 'Preview',
    section: '/emails',
    content: html``,
    response: {
      statusCode: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8', ...PREVIEW_HEADERS },
      body: inlineImagePlaceholders(body, e.attachments ?? [], images),
    },
  };
}

export const emailRoutes = [
  route.get('emails', list),
  route.get(`emails/${ID}`, detail),
  route.get(`emails/${ID}/content`, content),
  route.get(`emails/${ID}/deliveries`, deliveries),
  route.get(`emails/${ID}/preview`, preview),
];
