// Contacts: the list, add one (double opt-in: its confirmation link is shown, for the customer to send), delete
// (after a confirmation page).
import { at, dataTable, statusBadge, tokens } from '../components';
import { html } from '../http';
import { confirmForm, dangerLink, isConfirmed, postForm, textField } from '../layout';
import { type DashboardRequest, ID, route } from '../routes';

interface ContactItem {
  id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  status?: string;
  created_at: string;
}

async function list({ api, page }: DashboardRequest) {
  const { body } = await api.get<{ data: ContactItem[] }>('/contacts');
  const rows = body.data.length
    ? dataTable(
        'Contacts',
        ['Email', 'Name', 'Status', 'Added', 'Actions'],
        body.data.map((c) => [
          tokens(c.email),
          [c.first_name, c.last_name].filter(Boolean).join(' ') || '—',
          c.status ? statusBadge(c.status) : '—',
          at(c.created_at),
          dangerLink(`/contacts/${c.id}/delete`, `Delete ${c.email}`, 'small'),
        ]),
        { hiddenCaption: true },
      )
    : html`<p>No contacts in ${page.mode} mode yet.</p>`;
  const form = postForm(
    '/contacts',
    html`${textField(page, { id: 'contact-email', name: 'email', label: 'Email', type: 'email', attrs: html` required` })}
${textField(page, { id: 'contact-first', name: 'first_name', label: 'First name (optional)', attrs: html` maxlength="100"` })}
${textField(page, { id: 'contact-last', name: 'last_name', label: 'Last name (optional)', attrs: html` maxlength="100"` })}
<div><button type="submit">Add contact</button></div>`,
    page.csrf,
    'stack',
  );
  return {
    title: 'Contacts',
    section: '/contacts',
    content: html`<section aria-labelledby="contacts-h"><h2 id="contacts-h">Contacts</h2>${rows}</section><section aria-labelledby="new-contact-h"><h2 id="new-contact-h">Add a contact</h2>${form}</section>`,
  };
}

async function create({ api, form }: DashboardRequest) {
  const { body } = await api.send<ContactItem & { confirmation_url: string }>('POST', '/contacts', {
    email: form.get('email') ?? '',
    ...(form.get('first_name') ? { first_name: form.get('first_name') } : {}),
    ...(form.get('last_name') ? { last_name: form.get('last_name') } : {}),
  });
  return {
    to: '/contacts',
    flash: {
      kind: 'notice' as const,
      text:
        `Contact ${body.email} added, ${body.status ?? 'pending'} until they confirm. Sendflow sends no ` +
        'confirmation email: put this link in your own email to them; opening it subscribes them.',
      secret: { label: 'Confirmation link', value: body.confirmation_url },
    },
  };
}

async function confirmRemove({ api, page, params }: DashboardRequest) {
  const [id = ''] = params;
  const { body: c } = await api.get<ContactItem>(`/contacts/${id}`);
  const content = html`<section aria-label="What goes"><p>The contact <span class="mono">${tokens(c.email)}</span> is removed from your list. It cannot be undone.</p>
${confirmForm(`/contacts/${id}/delete`, `Delete ${c.email}`, page.csrf, '/contacts')}</section>`;
  return { title: 'Delete this contact?', section: '/contacts', back: ['/contacts', 'Contacts'] as const, content };
}

async function remove({ api, params, form }: DashboardRequest) {
  if (!isConfirmed(form)) return { to: `/contacts/${params[0]}/delete` };
  await api.send('DELETE', `/contacts/${params[0]}`);
  return { to: '/contacts', flash: { kind: 'notice' as const, text: 'Contact deleted.' } };
}

export const contactRoutes = [
  route.get('contacts', list),
  route.post('contacts', create, () => '/contacts'),
  route.get(`contacts/${ID}/delete`, confirmRemove),
  route.post(`contacts/${ID}/delete`, remove, () => '/contacts'),
];
