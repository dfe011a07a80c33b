// Sending domains: add one, see its DNS records (with copy buttons), check them now, its status, delete it.
import { at, dataTable, statusBadge, tokens } from '../components';
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
    ? dataTable(
        'Sending domains',
        ['Domain', 'Status', 'Added'],
        body.data.map((d) => [
          html`<a href="${BASE}/domains/${d.id}">${tokens(d.name)}</a>`,
          statusBadge(d.status),
          at(d.created_at),
        ]),
        { hiddenCaption: true },
      )
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
    content: html`<section aria-labelledby="domains-h"><h2 id="domains-h">Sending domains</h2>${rows}</section><section aria-labelledby="new-domain-h"><h2 id="new-domain-h">Add a domain</h2>${form}</section>`,
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
  const records = dataTable(
    'DNS records to publish',
    ['Type', 'Name', 'Value'],
    d.records.map((r, i) => [
      r.type,
      html`<span class="dns-name"><code id="rec-name-${i}">${atDots(r.name)}</code> <button type="button" class="secondary small" data-copy="rec-name-${i}" aria-label="Copy name of record ${i + 1}">Copy</button></span>`,
      html`<span class="dns-value"><code id="rec-value-${i}">${tokens(r.value)}</code> <button type="button" class="secondary small" data-copy="rec-value-${i}" aria-label="Copy value of record ${i + 1}">Copy</button></span>`,
    ]),
    { classes: ['token'] },
  );
  const content = html`<section aria-labelledby="state-h"><h2 id="state-h">Verification</h2>
<dl class="facts"><dt>Status</dt><dd id="domain-status">${statusBadge(d.status)}</dd><dt>Added</dt><dd>${when(d.created_at)}</dd></dl></section>
<section aria-labelledby="dns-h"><h2 id="dns-h">DNS records</h2><p>Publish these records at your DNS provider, then verify.</p>${records}</section>`;
  return {
    title: `Domain ${d.name}`,
    section: '/domains',
    back: ['/domains', 'Domains'] as const,
    actions: html`${actionButton(`/domains/${id}/verify`, 'Verify DNS records now', page.csrf, '')}${dangerLink(`/domains/${id}/delete`, 'Delete domain')}`,
    content,
  };
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
  const content = html`<section aria-label="What goes"><p>The domain <span class="mono">${tokens(d.name)}</span> and its DNS records are removed from Sendflow. It cannot be undone: adding it again starts a new verification.</p>
${confirmForm(`/domains/${id}/delete`, `Delete ${d.name}`, page.csrf, `/domains/${id}`)}</section>`;
  return { title: `Delete domain ${d.name}?`, section: '/domains', content };
}

async function remove({ api, params, form }: DashboardRequest) {
  if (!isConfirmed(form)) return { to: `/domains/${params[0]}/delete` };
  await api.send('DELETE', `/domains/${params[0]}`);
  return { to: '/domains', flash: { kind: 'notice' as const, text: 'Domain deleted.' } };
}

export const domainRoutes = [
  route.get('domains', list),
  route.post('domains', create, () => '/domains', { name: 'Domain name' }),
  route.get(`domains/${ID}`, detail),
  route.post(`domains/${ID}/verify`, verify, ([id]) => `/domains/${id}`),
  route.get(`domains/${ID}/delete`, confirmRemove),
  route.post(`domains/${ID}/delete`, remove, ([id]) => `/domains/${id}`),
];
