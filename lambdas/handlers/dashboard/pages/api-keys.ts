// API keys of the session's mode: the list (hints only), create (every scope unless fewer are picked; the
// secret shown once), revoke.
import { SCOPES } from '../../../domain/scopes';
import { html } from '../http';
import { actionButton, postForm, when } from '../layout';
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
    ? html`<div class="table-wrap"><table><caption>API keys (${page.mode} mode)</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>${body.data.map(
        (
          k,
        ) => html`<tr><td>${k.name}</td><td class="mono">${k.hint}</td><td>${k.scopes.join(', ')}</td><td>${when(k.created_at)}</td>
<td>${k.revoked_at ? `Revoked ${when(k.revoked_at)}` : actionButton(`/api-keys/${k.id}/revoke`, `Revoke ${k.name}`, page.csrf, 'danger')}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p>No keys in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/api-keys',
    html`<label for="key-name">Name</label><input id="key-name" name="name" type="text" maxlength="100" required>
<fieldset><legend>Scopes (a key made here has every scope unless you untick some)</legend>${SCOPES.map(
      (scope) => html`<label><input type="checkbox" name="scopes" value="${scope}" checked> ${scope}</label>`,
    )}</fieldset><div><button type="submit">Create key</button></div>`,
    page.csrf,
    'stack',
  );
  return {
    title: 'API keys',
    section: '/api-keys',
    content: html`${rows}<section aria-labelledby="new-key-h"><h2 id="new-key-h">New ${page.mode} key</h2>${form}</section>`,
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

async function revoke({ api, params }: DashboardRequest) {
  const { body } = await api.send<KeyItem>('DELETE', `/api-keys/${params[0]}`);
  return { to: '/api-keys', flash: { kind: 'notice' as const, text: `Key ${body.name} revoked.` } };
}

export const apiKeyRoutes = [
  route.get('api-keys', list),
  route.post('api-keys', create, () => '/api-keys'),
  route.post(`api-keys/${ID}/revoke`, revoke, () => '/api-keys'),
];
