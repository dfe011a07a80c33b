// Templates: the list (GET /v1/templates), and one template (GET /v1/templates/:id): its publication state, its
// variables, and a preview of its draft rendered with sample values typed into a form (a GET form: the values are
// in the URL, nothing is stored). The preview renders with the same rules a send does (lambdas/domain/templates:
// values HTML-escaped in html unless declared unescaped, missing and mistyped values named) and shows the HTML in
// a sandboxed frame under its own CSP, as the email page does.
import { EMAIL_LIMITS } from '../../../domain/email/limits';
import { RenderBudgetExceeded, renderTemplate } from '../../../domain/templates/syntax';
import { parseContent, resolveValues } from '../../../domain/templates/templates';
import { at, dataTable, statusBadge } from '../components';
import { BASE, href, html, PREVIEW_HEADERS } from '../http';
import { when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';

interface TemplateListItem {
  id: string;
  name: string;
  alias: string | null;
  status: 'draft' | 'published';
  published_at: string | null;
  updated_at: string;
}

interface TemplateVariableItem {
  key: string;
  type: 'string' | 'number';
  fallback_value: string | number | null;
  unescaped: boolean;
}

interface TemplateItem extends TemplateListItem {
  subject: string | null;
  from: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  variables: TemplateVariableItem[];
  has_unpublished_versions: boolean;
  current_version_id: string;
}

/** The query parameter of a variable's sample value: `v.NAME=Ada`. */
const PARAM = 'v.';

async function list({ api, page, query }: DashboardRequest) {
  const { body } = await api.get<{ data: TemplateListItem[]; has_more: boolean }>('/templates', {
    limit: '50',
    after: query.after,
  });
  const rows = body.data.length
    ? dataTable(
        'Templates, newest first',
        ['Name', 'Alias', 'Status', 'Updated'],
        body.data.map((t) => [
          html`<a href="${BASE}/templates/${t.id}">${t.name}</a>`,
          html`<span class="mono">${t.alias ?? '—'}</span>`,
          statusBadge(t.status),
          at(t.updated_at),
        ]),
        { hiddenCaption: true },
      )
    : html`<p>No templates in ${page.mode} mode yet. Templates are made through the API (the resend SDK's
<span class="mono">templates.create</span>), then published to send with them.</p>`;
  const older =
    body.has_more && body.data.length
      ? html`<p><a href="${href('/templates', { after: body.data.at(-1)?.id })}">Older templates</a></p>`
      : '';
  return {
    title: 'Templates',
    section: '/templates',
    content: html`<section aria-labelledby="templates-h"><h2 id="templates-h">Templates, newest first</h2>${rows}${older}</section>`,
  };
}

/** Each variable's sample: the value in the URL, else its fallback, else an example of its type. */
function samples(t: TemplateItem, query: Readonly<Record<string, string>>, keys: readonly string[]) {
  const declared = new Map(t.variables.map((v) => [v.key, v]));
  return keys.map((key) => {
    const variable = declared.get(key);
    const given = query[`${PARAM}${key}`];
    const fallback = variable?.fallback_value;
    const text =
      given ??
      (fallback !== null && fallback !== undefined ? String(fallback) : variable?.type === 'number' ? '1' : key);
    return { key, type: variable?.type ?? 'string', text };
  });
}

/** The draft rendered with the samples, or the problems that stop a send with the same values. */
function preview(t: TemplateItem, query: Readonly<Record<string, string>>) {
  const parsed = parseContent({
    html: t.html,
    ...(t.subject !== null ? { subject: t.subject } : {}),
    ...(t.text !== null ? { text: t.text } : {}),
  });
  if (!parsed.ok) return { samples: [], problems: parsed.problems.map((p) => `${p.path}: ${p.message}`) };
  const fields = [parsed.parsed.subject, parsed.parsed.html, parsed.parsed.text];
  const keys = [...new Set([...t.variables.map((v) => v.key), ...fields.flatMap((f) => f?.keys ?? [])])];
  const values = samples(t, query, keys);
  const given = Object.fromEntries(
    values.map((v) => [v.key, v.type === 'number' && v.text.trim() !== '' ? Number(v.text) : v.text]),
  );
  const variables = t.variables.map((v) => ({
    key: v.key,
    type: v.type,
    ...(v.fallback_value !== null ? { fallback: v.fallback_value } : {}),
    ...(v.unescaped ? { unescaped: true as const } : {}),
    createdAt: '',
    updatedAt: '',
  }));
  const resolved = resolveValues({ variables }, parsed.parsed, given);
  if (resolved.problems.length) {
    return { samples: values, problems: resolved.problems.map((p) => p.message) };
  }
  const budget = { remaining: EMAIL_LIMITS.storedBytes };
  try {
    const { subject, html: body, text } = parsed.parsed;
    return {
      samples: values,
      problems: [],
      subject: subject ? renderTemplate(subject, resolved.values, { escape: false, budget }) : null,
      html: renderTemplate(body, resolved.values, { escape: true, budget }),
      text: text ? renderTemplate(text, resolved.values, { escape: false, budget }) : null,
    };
  } catch (error) {
    if (!(error instanceof RenderBudgetExceeded)) throw error;
    return {
      samples: values,
      problems: [`The preview passes ${EMAIL_LIMITS.storedBytes} bytes: use shorter samples.`],
    };
  }
}

async function detail({ api, params, query }: DashboardRequest) {
  const [id = ''] = params;
  const { body: t } = await api.get<TemplateItem>(`/templates/${id}`);
  const shown = preview(t, query);
  const state =
    t.status === 'published'
      ? `Published ${when(t.published_at)}${t.has_unpublished_versions ? '; the draft has changes not published yet (sends use the published version)' : ''}`
      : 'Draft: not published, so it cannot be sent yet';
  const variables = t.variables.length
    ? dataTable(
        'Variables',
        ['Key', 'Type', 'Fallback', 'In html'],
        t.variables.map((v) => [
          html`<span class="mono">${v.key}</span>`,
          v.type,
          v.fallback_value === null ? 'none (required)' : String(v.fallback_value),
          v.unescaped ? 'as given (unescaped)' : 'HTML-escaped',
        ]),
      )
    : html`<p>No declared variables.</p>`;
  const sampleQuery = new URLSearchParams(
    shown.samples.map((s): [string, string] => [`${PARAM}${s.key}`, s.text]),
  ).toString();
  const form = shown.samples.length
    ? html`<form method="get" action="${BASE}/templates/${t.id}" class="stack">${shown.samples.map(
        (s, i) =>
          html`<label for="sample-${i}">${s.key} (${s.type})</label><input id="sample-${i}" name="${PARAM}${s.key}" type="${s.type === 'number' ? 'number' : 'text'}"${s.type === 'number' ? html` step="any"` : ''} value="${s.text}">`,
      )}<div><button type="submit" class="secondary">Preview</button></div></form>`
    : '';
  const rendered =
    shown.problems.length || shown.html === undefined
      ? html`<div class="flash error" role="alert"><p>A send with these values would be refused:</p><ul>${shown.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
      : html`<dl class="facts"><dt>Subject</dt><dd id="preview-subject">${shown.subject ?? '— (give subject when sending)'}</dd></dl>
<h3>HTML</h3><iframe class="preview" sandbox="" referrerpolicy="no-referrer" title="Preview of the template's HTML" src="${BASE}/templates/${t.id}/preview${sampleQuery ? `?${sampleQuery}` : ''}"></iframe>
<p>Shown without scripts or remote images.</p>
<h3>Text</h3>${shown.text ? html`<pre id="preview-text" tabindex="0">${shown.text}</pre>` : html`<p>No text body.</p>`}`;
  const content = html`<section aria-labelledby="template-h"><h2 id="template-h">Template</h2>
<dl class="facts"><dt>Id</dt><dd class="mono" id="template-id">${t.id}</dd><dt>Alias</dt><dd class="mono">${t.alias ?? '—'}</dd>
<dt>Status</dt><dd id="template-status">${state}</dd><dt>From</dt><dd>${t.from ?? '— (give from when sending)'}</dd>
<dt>Subject</dt><dd class="mono">${t.subject ?? '—'}</dd><dt>Reply-to</dt><dd>${t.reply_to?.join(', ') ?? '—'}</dd>
<dt>Updated</dt><dd>${when(t.updated_at)}</dd></dl></section>
<section aria-labelledby="variables-h"><h2 id="variables-h">Variables</h2>${variables}</section>
<section aria-labelledby="preview-h"><h2 id="preview-h">Preview of the draft with sample values</h2>${form}${rendered}</section>`;
  return { title: `Template: ${t.name}`, section: '/templates', back: ['/templates', 'Templates'] as const, content };
}

/** The draft's HTML rendered with the samples in the URL, for the detail page's frame (sandboxed, nothing fetched). */
async function previewFrame({ api, params, query }: DashboardRequest) {
  const { body: t } = await api.get<TemplateItem>(`/templates/${params[0] ?? ''}`);
  const shown = preview(t, query);
  return {
    title: 'Preview',
    section: '/templates',
    content: html``,
    response: {
      statusCode: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8', ...PREVIEW_HEADERS },
      body: shown.html ?? '',
    },
  };
}

export const templateRoutes = [
  route.get('templates', list),
  route.get(`templates/${ID}`, detail),
  route.get(`templates/${ID}/preview`, previewFrame),
];
