// Sending domains: add one, see its DNS records (with copy buttons), check them now, its status, delete it.
import { BASE, html, type Safe } from '../http';
import { actionButton, confirmForm, dangerLink, isConfirmed, postForm, textField, when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';

interface DomainItem {
  id: string;
  name: string;
  status: string;
  records: { type: string; name: string; value: string }[];
  created_at: string;
}

async function list({ api, page }: DashboardRequest) {
  const { body } = await api.get<{ data: DomainItem[] }>('/domains');
  const rows = body.data.length
    ? html`<div class="table-wrap" tabindex="0"><table><caption>Sending domains</caption>
<thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Added</th></tr></thead>
<tbody>${body.data.map(
        (d) =>
          html`<tr><td><a href="${BASE}/domains/${d.id}">${d.name}</a></td><td>${d.status}</td><td>${when(d.created_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No domains in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/domains',
    html`${textField(page, { id: 'domain-name', name: 'name', label: 'Domain name', attrs: html` required placeholder="mail.example.com"` })}
<div><button type="submit">Add domain</button></div>`,
    page.csrf,
    'stack',
  );
  return {
    title: 'Domains',
    section: '/domains',
    content: html`${rows}<section aria-labelledby="new-domain-h"><h2 id="new-domain-h">Add a domain</h2>${form}</section>`,
  };
}

async function create({ api, form }: DashboardRequest) {
  const { body } = await api.send<DomainItem>('POST', '/domains', { name: form.get('name') ?? '' });
  return {
    to: `/domains/${body.id}`,
    flash: { kind: 'notice' as const, text: `Domain ${body.name} added: publish its DNS records, then verify.` },
  };
}

async function detail({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: d } = await api.get<DomainItem>(`/domains/${id}`);
  const records = html`<div class="table-wrap" tabindex="0"><table><caption>DNS records to publish</caption>
<thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
<tbody>${d.records.map(
    (r, i) => html`<tr><td class="token">${r.type}</td>
<td class="dns-name"><code id="rec-name-${i}">${atDots(r.name)}</code> <button type="button" class="secondary" data-copy="rec-name-${i}" aria-label="Copy name of record ${i + 1}">Copy</button></td>
<td class="dns-value"><code id="rec-value-${i}">${r.value}</code> <button type="button" class="secondary" data-copy="rec-value-${i}" aria-label="Copy value of record ${i + 1}">Copy</button></td></tr>`,
  )}</tbody></table></div>`;
  const content = html`<p><a href="${BASE}/domains">All domains</a></p>
<dl class="facts"><dt>Status</dt><dd id="domain-status">${d.status}</dd><dt>Added</dt><dd>${when(d.created_at)}</dd></dl>
<div class="actions">${actionButton(`/domains/${id}/verify`, 'Verify DNS records now', page.csrf, '')}
${dangerLink(`/domains/${id}/delete`, 'Delete domain')}</div>
<section aria-labelledby="dns-h"><h2 id="dns-h">DNS records</h2>${records}</section>`;
  return { title: `Domain ${d.name}`, section: '/domains', content };
}

/** A record name may wrap only after a dot (never inside a label): a break opportunity after each. */
function atDots(name: string): Safe {
  const labels = name.split('.');
  return html`${labels.map((label, i) => html`${label}${i < labels.length - 1 ? html`.<wbr>` : ''}`)}`;
}

async function verify({ api, params }: DashboardRequest) {
  const { body } = await api.send<DomainItem>('POST', `/domains/${params[0]}/verify`);
  return {
    to: `/domains/${params[0]}`,
    flash: { kind: 'notice' as const, text: `Checked: the domain is ${body.status}.` },
  };
}

async function confirmRemove({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: d } = await api.get<DomainItem>(`/domains/${id}`);
  const content = html`<p>The domain <span class="mono">${d.name}</span> and its DNS records are removed from Sendflow. It cannot be undone: adding it again starts a new verification.</p>
${confirmForm(`/domains/${id}/delete`, `Delete ${d.name}`, page.csrf, `/domains/${id}`)}`;
  return { title: `Delete domain ${d.name}?`, section: '/domains', content };
}

async function remove({ api, params, form }: DashboardRequest) {
  if (!isConfirmed(form)) return { to: `/domains/${params[0]}/delete` };
  await api.send('DELETE', `/domains/${params[0]}`);
  return { to: '/domains', flash: { kind: 'notice' as const, text: 'Domain deleted.' } };
}

export const domainRoutes = [
  route.get('domains', list),
  route.post('domains', create, () => '/domains'),
  route.get(`domains/${ID}`, detail),
  route.post(`domains/${ID}/verify`, verify, ([id]) => `/domains/${id}`),
  route.get(`domains/${ID}/delete`, confirmRemove),
  route.post(`domains/${ID}/delete`, remove, ([id]) => `/domains/${id}`),
];
