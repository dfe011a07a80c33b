// Received (inbound) emails: the list, newest first (GET /v1/emails/receiving), and one email: sender,
// recipients, verdicts, the HTML in a sandboxed frame under its own CSP (scripts never run, nothing is
// fetched), the text as text, the headers, and download links of the raw message and each attachment.
import { at, dataTable, statusBadge, tokens } from '../components';
import { BASE, href, html, PREVIEW_HEADERS } from '../http';
import { when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';
import { cidsOf, inlineImagePlaceholders } from './inline-images';

interface ReceivedItem {
  id: string;
  from: string;
  to: string[];
  cc: string[];
  received_for: string[];
  subject: string;
  created_at: string;
  attachments: {
    id: string;
    filename: string | null;
    size: number;
    content_type: string;
    content_id?: string | null;
  }[];
  html?: string | null;
  text?: string | null;
  headers?: Record<string, string>;
  raw?: { download_url: string };
  verdicts?: Record<string, string> | null;
  status: 'received' | 'partial' | 'failed';
  notes: { code: string; message: string }[];
  omitted: Record<string, number>;
}

/** A partial or failed email says so where it is listed and shown: the raw message has what is not here. */
function receivedBadge(e: Pick<ReceivedItem, 'status'>) {
  return e.status === 'received' ? '' : html` ${statusBadge(e.status)}`;
}

async function list({ api, query }: DashboardRequest) {
  const { body } = await api.get<{ data: ReceivedItem[]; has_more: boolean }>('/emails/receiving', {
    limit: '20',
    after: query.after,
  });
  const rows = body.data.length
    ? dataTable(
        'Received emails, newest first',
        ['Received', 'From', 'For', 'Subject', 'Attachments'],
        body.data.map((e) => [
          html`<a href="${BASE}/received/${e.id}">${at(e.created_at)}</a>`,
          tokens(e.from),
          tokens(e.received_for.join(', ')),
          html`${tokens(e.subject || '(no subject)')}${receivedBadge(e)}`,
          e.attachments.length,
        ]),
        { hiddenCaption: true },
      )
    : html`<p>No received emails. Turn receiving on for a verified live domain (docs/inbound.md).</p>`;
  const older =
    body.has_more && body.data.length
      ? html`<p><a href="${href('/received', { after: body.data.at(-1)?.id })}">Older emails</a></p>`
      : '';
  return {
    title: 'Received emails',
    section: '/received',
    content: html`<section aria-labelledby="received-h"><h2 id="received-h">Received, newest first</h2>${rows}${older}</section>`,
  };
}

async function detail({ api, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: e } = await api.get<ReceivedItem>(`/emails/receiving/${id}`);
  const { body: files } = await api.get<{
    data: { id: string; filename?: string; size: number; download_url: string }[];
  }>(`/emails/receiving/${id}/attachments`);
  const verdicts = e.verdicts
    ? html`${Object.entries(e.verdicts).map(([name, value]) => html`<span class="badge">${name}: ${value}</span> `)}`
    : 'none (local)';
  const attachments = files.data.length
    ? html`<ul>${files.data.map(
        (f) => html`<li><a href="${f.download_url}" rel="noreferrer">${f.filename ?? f.id}</a> (${f.size} bytes)</li>`,
      )}</ul>`
    : html`<p>No attachments.</p>`;
  const headers = Object.entries(e.headers ?? {});
  const notes = e.notes.length
    ? html`<section aria-labelledby="notes-h" id="received-notes"><h2 id="notes-h">Not complete${receivedBadge(e)}</h2>
<ul>${e.notes.map((note) => html`<li>${note.message}</li>`)}</ul></section>`
    : '';
  const content = html`${notes}<section aria-labelledby="facts-h"><h2 id="facts-h">Email</h2>
<dl class="facts"><dt>Id</dt><dd class="mono" id="received-id">${e.id}</dd><dt>From</dt><dd>${tokens(e.from)}</dd><dt>To</dt><dd>${tokens(e.to.join(', '))}</dd>
${e.cc.length ? html`<dt>Cc</dt><dd>${e.cc.join(', ')}</dd>` : ''}<dt>Received for</dt><dd>${e.received_for.join(', ')}</dd>
<dt>Received</dt><dd>${when(e.created_at)}</dd><dt>Verdicts</dt><dd>${verdicts}</dd>
<dt>Raw message</dt><dd>${e.raw ? html`<a href="${e.raw.download_url}" rel="noreferrer">Download (.eml)</a>` : 'gone'}</dd></dl></section>
<section aria-labelledby="body-h"><h2 id="body-h">Content</h2>
${
  e.html
    ? html`<h3>HTML</h3><iframe class="preview" sandbox="" referrerpolicy="no-referrer" title="Preview of the received HTML" src="${BASE}/received/${e.id}/preview"></iframe>
<p>Shown without scripts or remote content: the sender wrote this HTML.</p>`
    : html`<p>No HTML body.</p>`
}
<h3>Text</h3>${e.text ? html`<pre id="text-body" tabindex="0">${e.text}</pre>` : html`<p>No text body.</p>`}</section>
<section aria-labelledby="files-h"><h2 id="files-h">Attachments</h2>${attachments}</section>
<section aria-labelledby="headers-h"><h2 id="headers-h">Headers</h2>${dataTable(
    'Headers as received',
    ['Name', 'Value'],
    headers.map(([name, value]) => [html`<span class="mono">${name}</span>`, tokens(value)]),
  )}</section>`;
  return {
    title: `Received: ${e.subject || '(no subject)'}`,
    section: '/received',
    back: ['/received', 'Received emails'] as const,
    content,
  };
}

/** The received HTML alone, for the page's frame, under PREVIEW_HEADERS (CSP sandbox: no script, no fetch). */
async function preview({ api, params, inlineImages }: DashboardRequest) {
  const { body: e } = await api.get<ReceivedItem>(`/emails/receiving/${params[0] ?? ''}`);
  const body = e.html ?? '';
  const wanted = cidsOf(body);
  const images =
    wanted.size && inlineImages ? await inlineImages('received', e.id, wanted, body.length) : new Map<string, string>();
  return {
    title: 'Preview',
    section: '/received',
    content: html``,
    response: {
      statusCode: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8', ...PREVIEW_HEADERS },
      body: inlineImagePlaceholders(body, e.attachments, images),
    },
  };
}

export const receivedRoutes = [
  route.get('received', list),
  route.get(`received/${ID}`, detail),
  route.get(`received/${ID}/preview`, preview),
];
