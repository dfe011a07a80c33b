// API keys of the session's mode: the list (hints only), create (every scope unless fewer are picked; the
// secret shown once), revoke (after a confirmation page naming the key).
import { SCOPES } from '../../../domain/scopes';
import { ApiCallError } from '../api-client';
import { at, badge, dataTable } from '../components';
import { BASE, html } from '../http';
import { confirmForm, dangerLink, fieldError, invalidAttrs, isConfirmed, postForm, textField, when } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';
import { checked } from './views';

interface KeyItem {
  id: string;
  name: string;
  mode: string;
  scopes: string[];
  hint: string;
  created_at: string;
  revoked_at?: string;
}

async function list({ api, page }: DashboardRequest) {
  const { body } = await api.get<{ data: KeyItem[] }>('/api-keys');
  const rows = body.data.length
    ? dataTable(
        `API keys (${page.mode} mode)`,
        ['Name', 'Key', 'Scopes', 'Created', 'State'],
        body.data.map((k) => [
          k.name,
          html`<span class="mono">${k.hint}</span>`,
          k.scopes.join(', '),
          at(k.created_at),
          k.revoked_at
            ? html`${badge('Revoked', 'bad')} ${at(k.revoked_at)}`
            : html`${badge('Active', 'ok')} ${dangerLink(`/api-keys/${k.id}/revoke`, `Revoke ${k.name}`, 'small')}`,
        ]),
        { hiddenCaption: true },
      )
    : html`<p>No keys in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/api-keys',
    html`${textField(page, { id: 'key-name', name: 'name', label: 'Name', attrs: html` maxlength="100" required` })}
<fieldset id="key-scopes"${invalidAttrs(page, 'scopes', 'key-scopes')}><legend>Scopes (a key made here has every scope unless you untick some)</legend>${SCOPES.map(
      (scope) => html`<label><input type="checkbox" name="scopes" value="${scope}" checked> ${scope}</label>`,
    )}</fieldset>${fieldError(page, 'scopes', 'key-scopes')}<div><button type="submit">Create key</button></div>`,
    page.csrf,
    'stack',
  );
  return {
    title: 'API keys',
    section: '/api-keys',
    content: html`<section aria-labelledby="keys-h"><h2 id="keys-h">Keys in ${page.mode} mode</h2>${rows}</section><section aria-labelledby="new-key-h"><h2 id="new-key-h">New ${page.mode} key</h2>${form}</section>`,
  };
}

async function create({ api, form }: DashboardRequest) {
  const { body } = await api.send<KeyItem & { key: string }>('POST', '/api-keys', {
    ...(form.get('name') ? { name: form.get('name') } : {}),
    scopes: checked(form, 'scopes'),
  });
  return {
    to: '/api-keys',
    flash: {
      kind: 'notice' as const,
      text: `Key ${body.name} created.`,
      secret: { label: 'API key', value: body.key },
    },
  };
}

/**
 * Which key, exactly, before it goes: name, hint, scopes. The dashboard acts with the session, not a key, so
 * revoking any key (even the one an app or this person's scripts use) leaves the dashboard working; the API
 * refuses nothing here, and neither does the dashboard.
 */
async function confirmRevoke({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body } = await api.get<{ data: KeyItem[] }>('/api-keys');
  const key = body.data.find((k) => k.id === id);
  if (!key) throw new ApiCallError(404, 'not_found', `No API key ${id} in ${page.mode} mode.`);
  const content = key.revoked_at
    ? html`<p>Key ${key.name} was revoked ${when(key.revoked_at)}.</p><p><a href="${BASE}/api-keys">All keys</a></p>`
    : html`<section aria-label="The key"><dl class="facts"><dt>Name</dt><dd>${key.name}</dd><dt>Key</dt><dd class="mono">${key.hint}</dd>
<dt>Mode</dt><dd>${key.mode}</dd><dt>Scopes</dt><dd>${key.scopes.join(', ')}</dd><dt>Created</dt><dd>${when(key.created_at)}</dd></dl>
<p>Every request made with this key (<span class="mono">${key.hint}</span>) is refused from now on, whoever uses it. This dashboard is not affected: it signs in with your session, not a key. A revoked key cannot be restored.</p>
${confirmForm(`/api-keys/${id}/revoke`, `Revoke ${key.name}`, page.csrf, '/api-keys')}</section>`;
  return { title: `Revoke key ${key.name}?`, section: '/api-keys', back: ['/api-keys', 'API keys'] as const, content };
}

async function revoke({ api, params, form }: DashboardRequest) {
  if (!isConfirmed(form)) return { to: `/api-keys/${params[0]}/revoke` };
  const { body } = await api.send<KeyItem>('DELETE', `/api-keys/${params[0]}`);
  return { to: '/api-keys', flash: { kind: 'notice' as const, text: `Key ${body.name} revoked.` } };
}

export const apiKeyRoutes = [
  route.get('api-keys', list),
  route.post('api-keys', create, () => '/api-keys'),
  route.get(`api-keys/${ID}/revoke`, confirmRevoke),
  route.post(`api-keys/${ID}/revoke`, revoke, () => '/api-keys'),
];
